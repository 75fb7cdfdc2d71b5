package engine_test

import (
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The toy world: the smallest subject that still takes every path of the
// engine. Its messages are increments of a shared counter, delivered at
// least once to one or two nodes; the world's service is a ledger that
// adds an increment once per key (Apply, or every time without a key) and
// answers whether it holds one (Applied); a design may keep its own
// durable state in a store (Store). The adapter to engine.World is
// toyworld_test.go; everything else goes through the engine's entry
// points.

// The toy's world event kinds.
const (
	evApply  = engine.EvWorld     // a ledger Apply (Detail: Key, Applied)
	evRead   = engine.EvWorld + 1 // a ledger Applied (Detail: Applied)
	evSample = engine.EvWorld + 2 // the store's notes after an attempt (Detail: Noted)
)

// The toy's answers.
const (
	ackApplied   engine.Ack = 1
	ackDuplicate engine.Ack = 2
)

// The toy's properties, in report order.
const (
	noDup      engine.Property = "NoDup"
	noLoss     engine.Property = "NoLoss"
	honestAck  engine.Property = "HonestAck"
	responsive engine.Property = "Responsive"
	// tidy: a node that keeps notes in its store (toyNoter) holds no note
	// of an increment once it answered it. Designs without notes give it
	// nothing to judge: engine.NotJudged, the kit's skip.
	tidy engine.Property = "Tidy"
)

var toyProperties = []engine.Property{noDup, noLoss, honestAck, responsive, tidy}

// The toy's families: each draws one feature, as the real worlds' do.
const (
	famDup        engine.Family = "dup"        // a delivery repeated, at the same or the other node
	famCrash      engine.Family = "crash"      // crashes around the ledger and the store
	famError      engine.Family = "error"      // failures and timeouts-after-success
	famPause      engine.Family = "pause"      // a node stalls while the sender retries elsewhere
	famConcurrent engine.Family = "concurrent" // same-instant deliveries, interleaved
	famGiveUp     engine.Family = "give-up"    // crashes, and a sender that gives up: only Recover finishes
	famLong       engine.Family = "long"       // many increments, each delivered twice
	famSmall      engine.Family = "small"      // exhaustive: every interleaving of a few same-instant deliveries
)

var toyFamilies = []engine.Family{famDup, famCrash, famError, famPause, famConcurrent, famGiveUp, famLong, famSmall}

var toyFamilyDocs = map[engine.Family]string{
	famDup:        "each increment is delivered once to three times",
	famCrash:      "crashes before and after a node's effects",
	famError:      "injected failures and timeouts after success",
	famPause:      "a node stalls mid-attempt while the sender retries elsewhere",
	famConcurrent: "same-instant deliveries on two nodes, interleaved",
	famGiveUp:     "crashes with a sender that gives up: only Recover completes",
	famLong:       "ten increments, each delivered twice",
	famSmall:      "every interleaving of one or two same-instant increments on two nodes",
}

// The coverage names, in report order.
var toyReached = []string{"duplicate", "retry", "crash", "fault", "pause", "overlap", "recover", "give-up", "panic"}

var toyExercises = map[engine.Family][]string{
	famDup:        {"duplicate"},
	famCrash:      {"crash"},
	famError:      {"fault"},
	famPause:      {"pause", "overlap"},
	famConcurrent: {"overlap"},
	famGiveUp:     {"give-up"},
	famLong:       {"duplicate"},
	famSmall:      {"overlap"},
}

// toyDetail is the world's part of an event.
type toyDetail struct {
	Key     string
	Applied bool
	Noted   []int // evSample: the increments noted in the store, in order
}

// toyInc is one increment: its id (its index) and what it adds.
type toyInc struct {
	ID     int
	Amount int
}

// toySched is a toy schedule: the engine's Frame beside the increments,
// how many drains the world runs (0: one), and whether answers may be
// overtaken (engine.AnswerRacer).
type toySched struct {
	engine.Frame
	Incs   []toyInc
	Drains int
	Racer  bool
}

type toyHistory = engine.History[toySched, toyDetail]
type toyEvent = engine.Event[toyDetail]

func toyMessages(s toySched) engine.Messages {
	return engine.Messages{N: len(s.Incs), Letter: "i", Noun: "increment"}
}

func toyClone(s toySched) toySched {
	s.Frame = engine.CloneFrame(s.Frame)
	s.Incs = slices.Clone(s.Incs)
	return s
}

func toyCheckFamily(f engine.Family) error {
	if err := engine.CheckParts(f, toyFamilies, "toy family"); err != nil {
		return err
	}
	if parts := f.Parts(); len(parts) > 1 && (slices.Contains(parts, famSmall) || slices.Contains(parts, famConcurrent)) {
		return fmt.Errorf("toy family %q joins %s or %s, which have no faults, with another family", f, famSmall, famConcurrent)
	}
	return nil
}

// toyValidate is Validate: the family, the increments (ids in order,
// amounts 1..9), the drains, then the frame.
func toyValidate(s toySched) error {
	if err := toyCheckFamily(s.Family); err != nil {
		return err
	}
	for i, x := range s.Incs {
		if x.ID != i {
			return fmt.Errorf("increment %d has id i%d, want i%d", i, x.ID, i)
		}
		if x.Amount < 1 || x.Amount > 9 {
			return fmt.Errorf("increment i%d adds %d, want 1..9", i, x.Amount)
		}
	}
	if s.Drains < 0 || s.Drains > 4 {
		return fmt.Errorf("drains is %d, want 0..4", s.Drains)
	}
	return engine.ValidateFrame(s.Frame, toyMessages(s))
}

// toyCheckWorld is the toy's one world rule: every increment is sent at
// least once (an increment nobody sends is not part of the world; the
// shrinker must drop it with Drops, not leave it behind).
func toyCheckWorld(s toySched) error {
	for _, x := range s.Incs {
		if !slices.ContainsFunc(s.Deliveries, func(d engine.Delivery) bool { return d.Msg == x.ID }) {
			return fmt.Errorf("i%d is never delivered", x.ID)
		}
	}
	return nil
}

// toyDrops are the shrinker's first passes: drop increments [i, j) with
// their deliveries (and the faults on those), renumbering the rest; the
// second pass also moves the faults numbered by attempt down by the
// deliveries dropped before them, as the engine's own delivery pass does
// (without it, a fault on a later attempt pins every increment before it).
func toyDrops(s toySched) []engine.Drop[toySched] {
	drop := func(shift bool) func(s toySched, i, j int) (toySched, bool) {
		return func(s toySched, i, j int) (toySched, bool) {
			if j-i >= len(s.Incs) {
				return s, false
			}
			gone := func(d int) bool { m := s.Deliveries[d].Msg; return m >= i && m < j }
			c := toyClone(s)
			c.Frame = engine.KeepDeliveries(c.Frame, func(d int) bool { return !gone(d) })
			if shift {
				var fs []engine.Fault
				for _, f := range c.Faults {
					if !f.OnDelivery && f.Attempt >= 0 && f.Attempt < len(s.Deliveries) {
						if gone(f.Attempt) {
							continue
						}
						n := 0
						for d := range f.Attempt {
							if gone(d) {
								n++
							}
						}
						f.Attempt -= n
					}
					fs = append(fs, f)
				}
				c.Faults = fs
			}
			c.Incs = append(c.Incs[:i:i], c.Incs[j:]...)
			for k := range c.Incs {
				c.Incs[k].ID = k
			}
			for k := range c.Deliveries {
				if c.Deliveries[k].Msg >= j {
					c.Deliveries[k].Msg -= j - i
				}
			}
			return c, true
		}
	}
	return []engine.Drop[toySched]{{N: len(s.Incs), Apply: drop(false)}, {N: len(s.Incs), Apply: drop(true)}}
}

// toyCanonical renumbers the increments in the order of their first
// delivery.
func toyCanonical(s toySched) (toySched, bool) {
	order := make([]int, len(s.Incs)) // old id -> new id + 1
	next := 0
	for _, d := range s.Deliveries {
		if order[d.Msg] == 0 {
			next++
			order[d.Msg] = next
		}
	}
	changed := false
	for old, n := range order {
		if n == 0 {
			next++
			order[old] = next
		}
		changed = changed || order[old] != old+1
	}
	if !changed {
		return s, false
	}
	c := toyClone(s)
	for old, x := range s.Incs {
		c.Incs[order[old]-1] = toyInc{ID: order[old] - 1, Amount: x.Amount}
	}
	for k, d := range s.Deliveries {
		c.Deliveries[k].Msg = order[d.Msg] - 1
	}
	return c, true
}

// The text form: the Frame's lines with the toy's own directives
// ("inc i0 amount=3", "drains 2", "racer true").

var toyForm = engine.TextForm{Subject: "toy", Messages: engine.Messages{Letter: "i", Noun: "increment"}, CheckFamily: toyCheckFamily}

func toyFormat(s toySched) string {
	var b strings.Builder
	b.WriteString("\n# increments\n")
	for _, x := range s.Incs {
		fmt.Fprintf(&b, "inc i%d amount=%d\n", x.ID, x.Amount)
	}
	if s.Drains > 0 {
		fmt.Fprintf(&b, "drains %d\n", s.Drains)
	}
	if s.Racer {
		b.WriteString("racer true\n")
	}
	return engine.FormatFrame(s.Frame, toyForm, b.String())
}

// toyHeader is the header lines of a hand-written toy schedule of family
// f on nodes nodes, with the generators' sender (retry 250ms, 4 sends).
func toyHeader(f engine.Family, nodes int) string {
	return fmt.Sprintf("family toy:%s\nnodes %d\nretry 250ms\nmax-attempts 4\n", f, nodes)
}

// toyText reads the toy's directives for ParseFrame.
type toyText struct {
	incs   []toyInc
	drains int
	racer  bool
}

func (*toyText) Directives() []string { return []string{"inc", "drains", "racer"} }
func (t *toyText) Msgs() int          { return len(t.incs) }

var incShape = map[string]string{"amount": "<1..9>"}

func (t *toyText) Directive(line int, toks []string) error {
	switch toks[0] {
	case "inc":
		kv, bare, err := engine.Fields(line, toks[1:], []string{"amount"}, incShape)
		if err != nil {
			return err
		}
		if len(bare) != 1 {
			return engine.Errorf(line, "want one increment id, got %q", strings.Join(bare, " "))
		}
		id, ok := engine.ParseID("i", bare[0])
		if !ok || id != len(t.incs) {
			return engine.Errorf(line, "want increment i%d next, got %q", len(t.incs), bare[0])
		}
		n, err := strconv.Atoi(kv["amount"])
		if err != nil {
			return engine.Bad(line, "amount", incShape["amount"], kv["amount"])
		}
		t.incs = append(t.incs, toyInc{ID: id, Amount: n})
	case "drains":
		n, err := strconv.Atoi(strings.Join(toks[1:], " "))
		if err != nil {
			return engine.Errorf(line, "want \"drains\" followed by a count, got %q", strings.Join(toks[1:], " "))
		}
		t.drains = n
	case "racer":
		t.racer = len(toks) == 2 && toks[1] == "true"
	}
	return nil
}

func toyParse(text string) (toySched, error) {
	var t toyText
	f, err := engine.ParseFrame(text, toyForm, &t)
	if err != nil {
		return toySched{}, err
	}
	s := toySched{Frame: f, Incs: t.incs, Drains: t.drains, Racer: t.racer}
	if err := toyValidate(s); err != nil {
		return toySched{}, &engine.ParseError{Msg: err.Error()}
	}
	return s, nil
}

// Generators. Every family draws 1..4 increments (error and pause 1..2, long 10) of amounts 1..9 (so a
// sampled cell of N schedules misses an amount with probability about
// (8/9)^N: below 1% from N = 40) on 1..2 nodes, within 2 s, retry 250ms,
// 4 sends per message; each family adds its one feature.

func toyGenerate(f engine.Family, seed uint64) toySched {
	h := fnv.New64a()
	h.Write([]byte(f))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	parts := f.Parts()
	has := func(g engine.Family) bool { return slices.Contains(parts, g) }
	s := toySched{Frame: engine.Frame{Family: f, Nodes: 1 + rng.IntN(2), RetryAfter: 250 * time.Millisecond, MaxAttempts: 4}}
	n := 1 + rng.IntN(4)
	if has(famError) || has(famPause) {
		// One or two increments: a fault's resend then never meets two
		// other increments in between (what forgetful's window of 2
		// forgets), so each verdict under these families follows from the
		// fault alone.
		n = 1 + rng.IntN(2)
	}
	copies := func() int { return 1 }
	switch {
	case has(famLong):
		n, copies = 10, func() int { return 2 }
	case has(famDup):
		copies = func() int { return 1 + rng.IntN(3) }
	case has(famConcurrent):
		copies = func() int { return 1 + rng.IntN(2) }
	}
	for i := range n {
		s.Incs = append(s.Incs, toyInc{ID: i, Amount: 1 + rng.IntN(9)})
	}
	for i := range n {
		for range copies() {
			// 100ms steps: some deliveries share an instant, most do not.
			s.Deliveries = append(s.Deliveries, engine.Delivery{At: time.Duration(rng.IntN(20)) * 100 * time.Millisecond, Msg: i, Node: rng.IntN(s.Nodes)})
		}
	}
	if has(famConcurrent) {
		// Two instants, so groups of one to eight deliveries meet on both
		// nodes, a copy of an increment at the same instant as its first
		// send on the other node; the scheduler's first choices are drawn.
		s.Nodes, s.Concurrent = 2, true
		for i := range s.Deliveries {
			if i > 0 && s.Deliveries[i].Msg == s.Deliveries[i-1].Msg {
				s.Deliveries[i].At, s.Deliveries[i].Node = s.Deliveries[i-1].At, 1-s.Deliveries[i-1].Node
				continue
			}
			s.Deliveries[i].At = time.Duration(rng.IntN(2)) * time.Second
		}
		for range 6 {
			s.Switches = append(s.Switches, rng.IntN(2))
		}
	}
	slices.SortStableFunc(s.Deliveries, func(a, b engine.Delivery) int { return int(a.At - b.At) })
	var fs []engine.Fault
	// A design makes up to 3 effects an attempt (journal: intent, apply,
	// done); attempts 0..n+1 are the first sends and a retry or two.
	point := func() (int, int) { return rng.IntN(len(s.Deliveries) + 2), rng.IntN(3) }
	switch {
	case has(famCrash):
		for range 1 + rng.IntN(2) {
			a, e := point()
			fs = append(fs, engine.Fault{Attempt: a, Effect: e, Kind: []engine.FaultKind{engine.CrashBefore, engine.CrashAfter}[rng.IntN(2)]})
		}
	case has(famError):
		for range 1 + rng.IntN(2) {
			a, e := point()
			fs = append(fs, engine.Fault{Attempt: a, Effect: e, Kind: []engine.FaultKind{engine.FailBefore, engine.TimeoutAfter}[rng.IntN(2)]})
		}
	case has(famPause):
		// Longer than RetryAfter (250ms), so the sender retries on the
		// other node while the first is stalled.
		s.Nodes = 2
		a, e := point()
		fs = append(fs, engine.Fault{Attempt: a, Effect: e, Kind: engine.Pause, For: time.Duration(3+rng.IntN(8)) * 100 * time.Millisecond})
	case has(famGiveUp):
		// One send per message and no resend at the drain: a crash at the
		// first attempt's second effect leaves the journal's intent
		// behind for Recover (and keyed's single effect done).
		s.MaxAttempts, s.GiveUp = 1, true
		fs = append(fs, engine.Fault{Attempt: 0, Effect: 1, Kind: engine.CrashBefore})
		if rng.IntN(2) == 0 {
			fs = append([]engine.Fault{{Attempt: engine.Recovery(0), Effect: 1, Kind: engine.CrashAfter}}, fs...)
		}
	}
	slices.SortFunc(fs, func(a, b engine.Fault) int {
		if a.Before(b) {
			return -1
		}
		if b.Before(a) {
			return 1
		}
		return 0
	})
	s.Faults = slices.CompactFunc(fs, func(a, b engine.Fault) bool { return a.Attempt == b.Attempt && a.Effect == b.Effect })
	return s
}

// toySmall is the exhaustive family: one increment at two nodes at once,
// then a second increment joining the first node's group.
func toySmall() iter.Seq[toySched] {
	return func(yield func(toySched) bool) {
		for _, ds := range [][]engine.Delivery{
			{{Msg: 0, Node: 0}, {Msg: 0, Node: 1}},
			{{Msg: 0, Node: 0}, {Msg: 0, Node: 1}, {Msg: 1, Node: 0}},
		} {
			n := 1 + slices.MaxFunc(ds, func(a, b engine.Delivery) int { return a.Msg - b.Msg }).Msg
			s := toySched{Frame: engine.Frame{Family: famSmall, Nodes: 2, RetryAfter: 250 * time.Millisecond, MaxAttempts: 4, Concurrent: true, Deliveries: ds}}
			for i := range n {
				s.Incs = append(s.Incs, toyInc{ID: i, Amount: 1})
			}
			if !yield(s) {
				return
			}
		}
	}
}

const toySmallScope = "1-2 increments at one instant on 2 nodes"

// The run: a System over a design's nodes, with the ledger and the
// design's store.

// toyDesign is the toy world's Design: it builds a node on an env.
type toyDesign interface {
	engine.Design
	NewNode(id int, env toyEnv) engine.Node
}

// toySystem is one run's world.
type toySystem struct {
	d      toyDesign
	s      toySched
	keys   map[string]bool // the ledger's applied keys
	counts []int           // per increment: times applied
	store  *toyStore
	closed *int // counts Close calls, for the tests
}

// toyStore is a design's durable state: a set and a list, shared by the
// nodes and outliving their crashes. Its lock matters only under
// RunOptions.Free, where nodes run their effects at once.
type toyStore struct {
	mu     sync.Mutex
	set    map[int]bool
	window []int
}

func (sys *toySystem) NewNode(id int, p *engine.Port[toyDetail]) engine.Node {
	return sys.d.NewNode(id, toyEnv{p: p, sys: sys})
}

func (sys *toySystem) Close() {
	if sys.closed != nil {
		*sys.closed++
	}
}

func (sys *toySystem) Drains() int { return sys.s.Drains }

// toyNoter is a node that keeps notes in its store (journal): the system
// samples them after each of its attempts, for Tidy.
type toyNoter interface{ KeepsNotes() }

// AfterAttempt implements engine.Observer: it records the store's notes
// after an attempt of a toyNoter, unless they are what the node's last
// sample showed (the history stays short).
func (sys *toySystem) AfterAttempt(p *engine.Port[toyDetail], n engine.Node, attempt, msg int, at time.Duration) {
	if _, ok := n.(toyNoter); !ok {
		return
	}
	sys.store.mu.Lock()
	var noted []int
	for m := range sys.store.set {
		noted = append(noted, m)
	}
	sys.store.mu.Unlock()
	slices.Sort(noted)
	ev := toyEvent{At: at, Kind: evSample, Node: p.Node(), Attempt: attempt, Msg: msg, Op: "sample", Detail: toyDetail{Noted: noted}}
	p.Record(ev, func(ev *toyEvent, past []toyEvent) bool {
		for i := len(past) - 1; i >= 0; i-- {
			if past[i].Kind == evSample && past[i].Node == ev.Node {
				return !slices.Equal(past[i].Detail.Noted, ev.Detail.Noted)
			}
		}
		return true
	})
}

// racerSystem is a toySystem whose answers may be overtaken.
type racerSystem struct{ *toySystem }

func (racerSystem) RacesAnswers() {}

// toyClosed counts the Close calls of every toy run, so a test can check
// Run closes each system once.
var toyClosed struct {
	mu sync.Mutex
	n  int
}

func toyRun(d toyDesign, s toySched, o engine.RunOptions) toyHistory {
	if err := toyValidate(s); err != nil {
		panic("toyRun: " + err.Error())
	}
	sys := &toySystem{d: d, s: s, keys: map[string]bool{}, counts: make([]int, len(s.Incs)), store: &toyStore{set: map[int]bool{}}}
	var n int
	sys.closed = &n
	var es engine.System[toyDetail] = sys
	if s.Racer {
		es = racerSystem{sys}
	}
	t := engine.Run(es, s.Frame, toyMessages(s), o)
	toyClosed.mu.Lock()
	toyClosed.n += n
	toyClosed.mu.Unlock()
	return toyHistory{Design: d.Name(), Schedule: s, Events: t.Events, Exhausted: t.Exhausted, Stalled: t.Stalled}
}

// toyEnv is what a toy design's node is given.
type toyEnv struct {
	p   *engine.Port[toyDetail]
	sys *toySystem
}

// Inc is increment msg of the schedule.
func (e toyEnv) Inc(msg int) toyInc { return e.sys.s.Incs[msg] }

// Store runs fn on the design's durable store as one effect named op.
func (e toyEnv) Store(op string, fn func(st *toyStore) error) error {
	return e.p.Effect(op, func() error {
		e.sys.store.mu.Lock()
		defer e.sys.store.mu.Unlock()
		return fn(e.sys.store)
	})
}

// Apply adds increment msg to the ledger, once per key (key "": every
// call adds). It reports whether this call added it.
func (e toyEnv) Apply(msg int, key string) (bool, error) {
	var applied bool
	err := e.p.Apply("apply", evApply, func(ev *toyEvent) {
		applied = key == "" || !e.sys.keys[key]
		if applied {
			e.sys.keys[key] = key != ""
			e.sys.counts[msg]++
		}
		ev.Msg, ev.Detail = msg, toyDetail{Key: key, Applied: applied}
	})
	return applied, err
}

// Applied reads whether the ledger holds increment msg.
func (e toyEnv) Applied(msg int) (bool, error) {
	var has bool
	err := e.p.Apply("read", evRead, func(ev *toyEvent) {
		has = e.sys.counts[msg] > 0
		ev.Msg, ev.Detail = msg, toyDetail{Applied: has}
	})
	return has, err
}

// Judging.

func toyJudge(h toyHistory) engine.Report {
	return engine.Report{judgeNoDup(h), judgeNoLoss(h), judgeHonestAck(h),
		engine.CheckResponsive(h.Events, h.Exhausted, responsive, "i", func(m int) string { return fmt.Sprintf("i%d", m) }),
		judgeTidy(h)}
}

// applies returns, per increment, the ledger events that added it.
func applies(h toyHistory) [][]toyEvent {
	out := make([][]toyEvent, len(h.Schedule.Incs))
	for _, e := range h.Events {
		if e.Kind == evApply && e.Detail.Applied && e.Msg >= 0 {
			out[e.Msg] = append(out[e.Msg], e)
		}
	}
	return out
}

// judgeNoDup: no increment is added twice.
func judgeNoDup(h toyHistory) engine.Verdict {
	var as []engine.Anomaly
	for m, evs := range applies(h) {
		if len(evs) > 1 {
			a := engine.NewAnomaly(h.Events, noDup, m, evs)
			a.Explain = fmt.Sprintf("i%d (+%d) was added %d times", m, h.Schedule.Incs[m].Amount, len(evs))
			as = append(as, a)
		}
	}
	return engine.Safety(noDup, h.Stalled, h.Exhausted, as)
}

// judgeNoLoss: every increment that reached a node is added by the end of
// the run. It is not prefix-closed: a run cut short proves nothing.
func judgeNoLoss(h toyHistory) engine.Verdict {
	if h.Stalled || h.Exhausted {
		return engine.Verdict{Property: noLoss, Outcome: engine.Unknown, Reason: "the run did not drain"}
	}
	ap := applies(h)
	var as []engine.Anomaly
	for _, e := range h.Events {
		if e.Kind == engine.EvArrive && e.First && len(ap[e.Msg]) == 0 {
			evs := []toyEvent{e}
			if last := h.Events[len(h.Events)-1]; last.Kind == engine.EvGiveUp || last.Msg == e.Msg {
				evs = append(evs, last)
			}
			a := engine.NewAnomaly(h.Events, noLoss, e.Msg, evs)
			a.Explain = fmt.Sprintf("i%d reached node %d and was never added", e.Msg, e.Node)
			as = append(as, a)
		}
	}
	if len(as) > 0 {
		return engine.Verdict{Property: noLoss, Outcome: engine.Fails, Anomalies: as}
	}
	return engine.Verdict{Property: noLoss, Outcome: engine.Holds}
}

// judgeTidy: no note of an increment is left in the store of a node that
// answered it, at the sample after that answer (the sample is the last
// word on the attempt: a later one may show the note again, from a
// resend). NotJudged when the design keeps no notes (no sample: a sample
// that shows what the last one did is not recorded, but the first is).
func judgeTidy(h toyHistory) engine.Verdict {
	sampled := false
	acked := map[int]toyEvent{} // attempt -> its answer
	var as []engine.Anomaly
	for _, e := range h.Events {
		switch {
		case e.Kind == engine.EvAck && e.Ack.Acked():
			acked[e.Attempt] = e
		case e.Kind == evSample:
			sampled = true
			if a, ok := acked[e.Attempt]; ok && slices.Contains(e.Detail.Noted, e.Msg) {
				an := engine.NewAnomaly(h.Events, tidy, e.Msg, []toyEvent{a, e})
				an.Explain = fmt.Sprintf("node %d answered i%d %s with its note still in the store", e.Node, e.Msg, toyAckName(a.Ack))
				as = append(as, an)
			}
		}
	}
	if !sampled {
		return engine.Verdict{Property: tidy, Outcome: engine.NotJudged, Reason: "the design keeps no notes (its nodes are not toyNoters)"}
	}
	return engine.Safety(tidy, h.Stalled, h.Exhausted, as)
}

// judgeHonestAck: an answer that stops the sender comes after the ledger
// added its increment.
func judgeHonestAck(h toyHistory) engine.Verdict {
	added := make([]bool, len(h.Schedule.Incs))
	var as []engine.Anomaly
	for _, e := range h.Events {
		switch {
		case e.Kind == evApply && e.Detail.Applied:
			added[e.Msg] = true
		case e.Kind == engine.EvAck && e.Ack.Acked() && !added[e.Msg]:
			a := engine.NewAnomaly(h.Events, honestAck, e.Msg, []toyEvent{e})
			a.Explain = fmt.Sprintf("i%d was answered %s before the ledger added it", e.Msg, toyAckName(e.Ack))
			as = append(as, a)
		}
	}
	return engine.Safety(honestAck, h.Stalled, h.Exhausted, as)
}

func toyCoverage(h toyHistory) engine.Coverage {
	c := engine.Coverage{}
	open := map[int]bool{}
	for _, e := range h.Events {
		switch e.Kind {
		case engine.EvArrive:
			if !e.First {
				c["duplicate"]++
			}
			if e.Delivery < 0 {
				c["retry"]++
			}
			if len(open) > 0 {
				c["overlap"]++
			}
			open[e.Attempt] = true
		case engine.EvAck, engine.EvPanic:
			delete(open, e.Attempt)
		case engine.EvCrash:
			c["crash"]++
			delete(open, e.Attempt)
		case engine.EvFault:
			c["fault"]++
		case engine.EvPause:
			c["pause"]++
		case engine.EvRecover:
			c["recover"]++
		case engine.EvGiveUp:
			c["give-up"]++
		}
		if e.Kind == engine.EvPanic {
			c["panic"]++
		}
	}
	return c
}

// Rendering.

func toyAckName(a engine.Ack) string {
	switch a {
	case engine.Nack:
		return "nack"
	case ackApplied:
		return "applied"
	case ackDuplicate:
		return "duplicate"
	}
	return fmt.Sprintf("ack%d", a)
}

func toyKindName(k engine.EventKind) string {
	switch k {
	case evApply:
		return "apply"
	case evRead:
		return "read"
	case evSample:
		return "sample"
	}
	return k.String()
}

func toyGroundTruth(h toyHistory) string {
	var b strings.Builder
	b.WriteString("increments:\n")
	for _, x := range h.Schedule.Incs {
		fmt.Fprintf(&b, "  i%d +%d\n", x.ID, x.Amount)
	}
	return b.String()
}

func toyEventText(e toyEvent) string {
	switch e.Kind {
	case evApply:
		key := "no key"
		if e.Detail.Key != "" {
			key = "key " + e.Detail.Key
		}
		if e.Detail.Applied {
			return fmt.Sprintf("i%d added (%s)", e.Msg, key)
		}
		return fmt.Sprintf("i%d not added (%s already applied)", e.Msg, key)
	case evRead:
		return fmt.Sprintf("i%d applied? %t", e.Msg, e.Detail.Applied)
	case evSample:
		return fmt.Sprintf("the store notes %v", e.Detail.Noted)
	}
	return toyKindName(e.Kind)
}

func toyMermaidLine(e toyEvent) string {
	if e.Kind == evSample {
		return fmt.Sprintf("Note over D: %s", toyEventText(e))
	}
	return fmt.Sprintf("N%d->>L: %s", e.Node, toyEventText(e))
}

const toyParticipants = "    participant D as Store\n    participant L as Ledger\n"

// errToy is a design's own error, for a node that refuses.
var errToy = errors.New("toy: refused")
