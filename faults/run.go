package faults

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RunOptions tunes Run. The zero value is the default.
type RunOptions struct {
	// MaxEvents stops the run when the history reaches this many events
	// (the verdict is Unknown then). 0 means DefaultMaxEvents.
	MaxEvents int
	// Free runs the groups of a Concurrent schedule on free-running
	// goroutines (the Go scheduler interleaves them, in parallel), for the
	// race detector: `go test -race` then sees the design's real data
	// races. Its history is not reproducible and Schedule.Switches is
	// ignored; it may miss a bug but never reports a false one. Without
	// Free, Run interleaves the goroutines one at a time as Switches says.
	Free bool
	// Stall is how long a run may make no progress (no event recorded, no
	// env call made) before the watchdog ends it: a design blocked inside
	// Deliver or Recover (a lock left held by a crash that unwound through
	// it, a wait for another delivery) would otherwise hang the caller
	// forever. The history then ends with EvStall and is Stalled, which
	// the Responsive property fails. 0 means DefaultStall; raise it for a
	// design whose single call can legitimately take longer (a real store
	// across a network).
	Stall time.Duration
	// Choices, if set, receives the arity of each scheduling choice the run
	// makes (how many goroutines could run then), in order: the branching
	// of the run's tree of interleavings (Interleavings walks it).
	Choices *[]int
	_       struct{}
}

// DefaultStall is RunOptions.Stall's default. A run records an event every
// few microseconds (a generated schedule runs in about 100 us, 10 times that
// under the race detector), so 5 s without one is a design that will never
// move again, not a slow one, and a user learns it within seconds rather
// than from go test's 10-minute timeout.
const DefaultStall = 5 * time.Second

// DefaultMaxEvents is the event budget of a run. A generated schedule has at
// most about 60 planned deliveries and 16 sends per settlement; a design
// makes a handful of effects per attempt, so an honest run stays far below
// 60 x 16 x 10 = 9,600 events. 1<<16 leaves room for hand-written schedules
// and stops a design that loops (e.g. recovery that keeps re-crediting).
const DefaultMaxEvents = 1 << 16

// DrainAfter is how long after the last planned delivery the runner calls
// Recover on every node: far past every lease and window a design may hold,
// so recovery may complete anything a crash left behind.
const DrainAfter = time.Hour

// Op names the runner uses in events besides the designs' own durable ops.
const (
	OpCredit  = "credit"  // an env.Credit call
	OpAck     = "ack"     // a crash after Deliver returned: the ack is lost
	OpRecover = "recover" // EvRecover of a Recoverer
	OpRebuild = "rebuild" // EvRecover of a node without Recover: rebuilt only
	OpDeliver = "deliver" // EvPanic raised inside Deliver
)

// crashSignal is the panic value of an injected crash. It is unexported so a
// design cannot fake or match it; the runner recovers it around Deliver.
type crashSignal struct{}

// budgetSignal is the panic value that aborts an attempt or a Recover once
// the event budget is spent, so a design that loops through env calls
// cannot hang the run.
type budgetSignal struct{}

// Run executes s against a fresh cluster of d and returns the history: a
// pure function of (d, s), the same history every time (RunOptions.Free
// aside). The sender is at-least-once: it resends what was not acked
// RetryAfter later, to the next node, up to MaxAttempts sends, again after
// the drain (every node's Recover, DrainAfter past the last send), then
// gives up (EvGiveUp). Faults fire at (attempt or Recover call, effect); a
// crash or panic rebuilds the node and recovers it. Same-instant sends of a
// Concurrent schedule run on one goroutine per node, interleaved as
// Switches says. Run panics on a schedule Validate rejects (but for the
// uniqueness of (Player, Match, Kind), which cannot derail it).
func Run(d Design, s Schedule, opt RunOptions) History {
	if err := validateShape(s); err != nil {
		panic("faults.Run: invalid schedule: " + err.Error())
	}
	r := newRunner(d, s, opt)
	// The run goes on its own goroutine so that the watchdog can give up on
	// a design that blocks: the caller gets a Stalled history, the blocked
	// goroutine is abandoned (it stops at its next env call).
	r.stall = opt.Stall
	if r.stall <= 0 {
		r.stall = DefaultStall
	}
	r.finish = make(chan []Event, 2)
	watch(r)
	runOn(func() {
		r.run()
		r.finish <- nil
	})
	if events := <-r.finish; events != nil {
		return History{Design: d.Name(), Schedule: s, Events: events, Stalled: true}
	}
	unwatch(r)
	if c, ok := r.cluster.(ClusterCloser); ok {
		c.Close()
	}
	return History{Design: d.Name(), Schedule: s, Events: r.events, Exhausted: r.exhausted}
}

// abandon gives up on a run that made no progress for r.stall: it appends
// EvStall to a copy of the history so far and hands it to Run. The
// watchdog calls it.
func (r *runner) abandon() {
	r.mu.Lock()
	if r.abandoned {
		r.mu.Unlock()
		return
	}
	r.abandoned = true
	r.overrun.Store(true) // the abandoned goroutine stops at its next env call
	ev := Event{Seq: len(r.events), At: r.lastAtLocked(), Kind: EvStall, Node: -1, Attempt: -1, Settlement: -1,
		Err: fmt.Sprintf("no progress for %s: the design is blocked inside Deliver or Recover (a Cluster lock held across an Env call, or a wait for another delivery?)", r.stall)}
	events := append(slices.Clip(r.events), ev)
	r.mu.Unlock()
	r.finish <- events
}

// lastAtLocked is the virtual time of the latest event (r.mu held).
func (r *runner) lastAtLocked() time.Duration {
	if n := len(r.events); n > 0 {
		return r.events[n-1].At
	}
	return 0
}

// item is one send the sender makes: a planned delivery or a retry.
type item struct {
	at       time.Duration
	sett     int
	node     int
	delivery int // index into Schedule.Deliveries, -1 for a retry
}

// runner is one Run. In order: planned deliveries and sender retries are
// processed by (At, planned before retries, then insertion order), each an
// attempt numbered from 0 in the order Node.Deliver is called; planned
// deliveries are sent regardless of acks. Every Env call is an effect; a
// crash panics inside it with a private value, recovered here (EvCrash),
// and a crash whose effect index is past the effects an attempt made fires
// after Deliver returned (the ack is lost). In a concurrent group, a
// goroutine parks at every scheduling point (before each attempt and each
// env call) and the baton holder chooses who goes on (interleave.go);
// attempts are numbered when they start, so Event.Attempt tells which
// goroutine ran each event. With RunOptions.Free the goroutines run freely
// and Env and the ledger are shared under mu.
type runner struct {
	s       Schedule
	cluster Cluster
	nodes   []Node
	envs    []*env

	// mu guards what goroutines of the concurrent family share: the
	// history, the ledger, the attempt counter, the Load inputs.
	mu       sync.Mutex
	events   []Event
	ledger   map[string]struct{}
	attempts int        // next attempt number
	players  [][]uint32 // per node: distinct players delivered to it, for Load
	stamp    int        // for distinct counting with sett[].mark

	// sett is per settlement: seen and mark under mu, the rest the sender's
	// (touched only between attempt groups).
	sett []settState
	// ids maps a settlement's business identity to its ID, for the ledger.
	ids map[settleKey]int

	// Sender state, touched only by the sender (the run goroutine).
	retries   []item
	retryHead int
	lastAt    time.Duration

	// free: opt.Free (concurrent groups run unscheduled). choices counts
	// the scheduler's choices so far (k in Schedule.Switches); arity, when
	// not nil (tests), receives the number of runnable goroutines at each.
	free       bool
	choices    int
	recoveries int // Recover calls so far (the next one's index)
	arity      *[]int

	maxEvents int
	overrun   atomic.Bool // the history reached maxEvents, or the run was abandoned
	exhausted bool
	stopped   bool // the event budget ran out

	// progress counts events and env calls, for the watchdog;
	// abandoned (under mu) drops the events of a run the watchdog gave up.
	// finish receives the run's end: nil when it finished, the history
	// with EvStall when the watchdog abandoned it (the first one wins).
	progress  atomic.Uint64
	abandoned bool
	stall     time.Duration
	finish    chan []Event
	// The watchdog's own: the progress it last saw and when it changed.
	seen      uint64
	seenSince time.Time
}

type settState struct {
	seen     bool // arrived somewhere (under mu)
	acked    bool // the sender got an ack
	pending  bool // a retry is queued
	sends    int  // sends so far, planned and retries
	limit    int  // sends allowed before the sender gives up
	lastNode int  // node of the latest send, for round robin
	mark     int  // scratch stamp for distinct counting (under mu)
}

func newRunner(d Design, s Schedule, opt RunOptions) *runner {
	n := len(s.Settlements)
	r := &runner{
		s:         s,
		cluster:   d.NewCluster(),
		nodes:     make([]Node, s.Nodes),
		envs:      make([]*env, s.Nodes),
		ledger:    make(map[string]struct{}, n),
		players:   make([][]uint32, s.Nodes),
		sett:      make([]settState, n),
		maxEvents: opt.MaxEvents,
		free:      opt.Free,
		arity:     opt.Choices,
	}
	if r.maxEvents <= 0 {
		r.maxEvents = DefaultMaxEvents
	}
	// A first delivery to a three-effect design makes 5 events (arrive,
	// claim, credit, commit, ack), a duplicate 3; 5 per delivery plus a few
	// recoveries fits a clean run in one allocation, and append grows the
	// rest. More wastes memory and time: histories above 32 KiB are large
	// heap objects, whose allocation takes the heap lock.
	r.events = make([]Event, 0, min(5*len(s.Deliveries)+16, r.maxEvents+1))
	r.ids = make(map[settleKey]int, n)
	for i, st := range s.Settlements {
		r.sett[i].limit = s.MaxAttempts
		r.ids[settleKey{st.Player, st.Match, st.Kind}] = i
	}
	for id := range s.Nodes {
		r.envs[id] = &env{r: r, node: id, attempt: -1, sett: -1}
		r.nodes[id] = r.cluster.NewNode(id, r.envs[id])
	}
	return r
}

// identify is the ID of the schedule's settlement with s's business
// identity, or -1 if there is none (a design credited a settlement that
// does not exist).
func (r *runner) identify(s Settlement) int {
	if id, ok := r.ids[settleKey{s.Player, s.Match, s.Kind}]; ok {
		return id
	}
	return -1
}

// record appends e to the history; it is safe for concurrent use.
func (r *runner) record(e Event) {
	r.mu.Lock()
	r.recordLocked(e)
	r.mu.Unlock()
}

func (r *runner) recordLocked(e Event) {
	if r.abandoned {
		return
	}
	r.progress.Add(1)
	e.Seq = len(r.events)
	r.events = append(r.events, e)
	if len(r.events) >= r.maxEvents {
		r.overrun.Store(true)
	}
}

func (r *runner) over() bool { return r.overrun.Load() }

// next pops the next send: planned deliveries before retries at equal At.
// It returns false when both are exhausted.
func (r *runner) next(pi *int) (item, bool) {
	var plan *Delivery
	if *pi < len(r.s.Deliveries) {
		plan = &r.s.Deliveries[*pi]
	}
	hasRetry := r.retryHead < len(r.retries)
	switch {
	case plan != nil && (!hasRetry || plan.At <= r.retries[r.retryHead].at):
		*pi++
		return item{at: plan.At, sett: plan.Settlement, node: plan.Node, delivery: *pi - 1}, true
	case hasRetry:
		it := r.retries[r.retryHead]
		r.retryHead++
		return it, true
	}
	return item{}, false
}

// peekAt is the At of the next send, if any.
func (r *runner) peekAt(pi int) (time.Duration, bool) {
	hasRetry := r.retryHead < len(r.retries)
	if pi < len(r.s.Deliveries) {
		at := r.s.Deliveries[pi].At
		if hasRetry && r.retries[r.retryHead].at < at {
			at = r.retries[r.retryHead].at
		}
		return at, true
	}
	if hasRetry {
		return r.retries[r.retryHead].at, true
	}
	return 0, false
}

func (r *runner) run() {
	pi := 0
	r.loop(&pi)
	if r.stopped {
		return
	}
	// Drain: recovery far past every lease, then the sender's last resends.
	drainAt := r.lastAt + DrainAfter
	for id := range r.nodes {
		if rec, ok := r.nodes[id].(Recoverer); ok {
			r.recover(id, rec, drainAt)
		}
	}
	// Every unacked settlement is resent at one time, so the retry queue
	// stays sorted by At (each later retry is RetryAfter after its attempt).
	resendAt := drainAt + r.s.RetryAfter
	for id := range r.s.Settlements {
		st := &r.sett[id]
		if st.seen && !st.acked && !r.s.GiveUp {
			st.limit = st.sends + r.s.MaxAttempts
			if !st.pending {
				st.pending = true
				r.retries = append(r.retries, item{at: resendAt, sett: id, node: r.nextNode(id), delivery: -1})
			}
		}
	}
	r.loop(&pi)
	if r.stopped {
		return
	}
	// The sender gives up on what is still unacked: NoLoss judges whether
	// it was credited all the same (by a retry whose ack was lost, or by
	// Recover).
	for id := range r.s.Settlements {
		if r.sett[id].seen && !r.sett[id].acked {
			r.record(Event{At: max(r.lastAt, drainAt), Kind: EvGiveUp, Node: -1, Attempt: -1, Settlement: id, Err: fmt.Sprintf("the sender gave up on s%d after %d sends", id, r.sett[id].sends)})
		}
	}
}

// nextNode is the node after the one id was last sent to (round robin).
func (r *runner) nextNode(id int) int {
	return (r.sett[id].lastNode + 1) % r.s.Nodes
}

func (r *runner) loop(pi *int) {
	for {
		if r.over() {
			r.stopped, r.exhausted = true, true
			r.record(Event{At: r.lastAt, Kind: EvBudget, Node: -1, Attempt: -1, Settlement: -1, Err: fmt.Sprintf("event budget of %d spent", r.maxEvents)})
			return
		}
		if r.s.Concurrent {
			if !r.group(pi) {
				return
			}
			continue
		}
		it, ok := r.next(pi)
		if !ok {
			return
		}
		if it.delivery < 0 {
			r.sett[it.sett].pending = false
			if r.sett[it.sett].acked {
				continue
			}
		}
		r.lastAt = it.at
		r.sett[it.sett].sends++
		r.sett[it.sett].lastNode = it.node
		acked := r.attempt(it)
		r.answer(it, acked)
	}
}

// answer is the sender's reaction to one attempt.
func (r *runner) answer(it item, acked bool) {
	id := it.sett
	if acked {
		r.sett[id].acked = true
		return
	}
	if r.sett[id].acked || r.sett[id].pending || r.sett[id].sends >= r.sett[id].limit {
		return
	}
	r.sett[id].pending = true
	r.retries = append(r.retries, item{at: it.at + r.s.RetryAfter, sett: id, node: (it.node + 1) % r.s.Nodes, delivery: -1})
}

// group runs every send due at the next At at once (the concurrent family).
func (r *runner) group(pi *int) bool {
	at, ok := r.peekAt(*pi)
	if !ok {
		return false
	}
	var items []item
	for {
		a, ok := r.peekAt(*pi)
		if !ok || a != at {
			break
		}
		it, _ := r.next(pi)
		if it.delivery < 0 {
			r.sett[it.sett].pending = false
			if r.sett[it.sett].acked {
				continue
			}
		}
		r.sett[it.sett].sends++
		r.sett[it.sett].lastNode = it.node
		items = append(items, it)
	}
	r.lastAt = at
	acked := make([]bool, len(items))
	// One goroutine per node, in the order of the node's first item in the
	// group (the order Switches indexes).
	var work [][]int
	slot := make([]int, r.s.Nodes)
	for i, it := range items {
		if slot[it.node] == 0 {
			work = append(work, nil)
			slot[it.node] = len(work)
		}
		w := slot[it.node] - 1
		work[w] = append(work[w], i)
	}
	if r.free {
		var wg sync.WaitGroup
		for _, mine := range work {
			wg.Go(func() {
				for _, i := range mine {
					acked[i] = r.attempt(items[i])
				}
			})
		}
		wg.Wait()
	} else {
		r.interleave(items, work, acked)
	}
	for i, it := range items {
		r.answer(it, acked[i])
	}
	return true
}

// attempt delivers one send to its node and reports whether the sender got
// an ack. It touches only its own node, its env, and (under mu) the shared
// history, so goroutines on distinct nodes may run it at once.
func (r *runner) attempt(it item) bool {
	n, id := it.node, it.sett
	e := r.envs[n]
	st := r.s.Settlements[id]

	r.mu.Lock()
	a := r.attempts
	r.attempts++
	first := !r.sett[id].seen
	r.sett[id].seen = true
	r.recordLocked(Event{At: it.at, Kind: EvArrive, Node: n, Attempt: a, Settlement: id, First: first, Delivery: it.delivery})
	r.mu.Unlock()

	e.begin(a, id, it.at, r.faultsOf(a))
	now := Epoch.Add(it.at)
	ack, err, panicked, pv := deliver(r.nodes[n], now, st)
	effects, crashed := e.effects, e.crashed
	e.end()

	acked := false
	if _, budget := pv.(budgetSignal); panicked && budget {
		return false // the loop stops the run
	}
	switch {
	case panicked && !crashed:
		r.record(Event{At: it.at, Kind: EvPanic, Node: n, Attempt: a, Settlement: id, Op: OpDeliver, Err: fmt.Sprint(pv)})
		r.rebuild(n, it.at)
	case crashed:
		// The env recorded EvCrash (the design may even have recovered
		// the panic itself: the node is dead all the same).
		r.rebuild(n, it.at)
	default:
		if f, ok := r.lostAck(a, effects); ok {
			r.record(Event{At: it.at, Kind: EvCrash, Node: n, Attempt: a, Settlement: id, Op: OpAck, Fault: f.Kind})
			r.rebuild(n, it.at)
			break
		}
		ev := Event{At: it.at, Kind: EvAck, Node: n, Attempt: a, Settlement: id, Ack: ack}
		if err != nil {
			ev.Ack, ev.Err = Nack, err.Error()
		}
		r.record(ev)
		acked = err == nil && ack.Acked()
	}
	r.sample(n, a, id, it.at)
	return acked
}

// deliver calls Deliver, recovering any panic (pv is then a designPanic,
// unless it is one of the runner's own signals).
func deliver(nd Node, now time.Time, s Settlement) (ack Ack, err error, panicked bool, pv any) {
	defer func() {
		if v := recover(); v != nil {
			panicked, pv = true, asDesignPanic(v)
		}
	}()
	ack, err = nd.Deliver(now, s)
	return ack, err, false, nil
}

// faultsOf returns the faults of attempt a (s.Faults is sorted).
func (r *runner) faultsOf(a int) []Fault {
	fs := r.s.Faults
	if len(fs) == 0 {
		return nil
	}
	i := sort.Search(len(fs), func(i int) bool { return fs[i].Attempt >= a })
	j := i
	for j < len(fs) && fs[j].Attempt == a {
		j++
	}
	return fs[i:j]
}

// lostAck returns the crash fault of attempt a that fires after Deliver
// returned: the first crash whose effect index is past the effects made.
func (r *runner) lostAck(a, effects int) (Fault, bool) {
	for _, f := range r.faultsOf(a) {
		if f.Effect >= effects && (f.Kind == CrashBefore || f.Kind == CrashAfter) {
			return f, true
		}
	}
	return Fault{}, false
}

// rebuild replaces node n's memory after a crash and runs its Recover.
func (r *runner) rebuild(n int, at time.Duration) {
	r.nodes[n] = r.cluster.NewNode(n, r.envs[n])
	if rec, ok := r.nodes[n].(Recoverer); ok {
		r.recover(n, rec, at)
		return
	}
	r.record(Event{At: at, Kind: EvRecover, Node: n, Attempt: -1, Settlement: -1, Op: OpRebuild})
}

// recover runs rec.Recover at virtual time at, as the run's next recovery
// call (faults at Recovery(k) fire inside it). A crash inside it replaces
// the node, which recovers again, as the next call.
func (r *runner) recover(n int, rec Recoverer, at time.Duration) {
	e := r.envs[n]
	k := r.recoveries
	r.recoveries++
	e.begin(-1, -1, at, r.faultsOf(Recovery(k)))
	err, panicked, pv := callRecover(rec, Epoch.Add(at))
	crashed := e.crashed
	e.end()
	if _, budget := pv.(budgetSignal); panicked && budget {
		return
	}
	if crashed {
		// The env recorded EvCrash: the node died mid-recovery.
		r.rebuild(n, at)
		return
	}
	ev := Event{At: at, Kind: EvRecover, Node: n, Attempt: -1, Settlement: -1, Op: OpRecover}
	if err != nil {
		ev.Err = err.Error()
	}
	r.record(ev)
	if panicked {
		r.record(Event{At: at, Kind: EvPanic, Node: n, Attempt: -1, Settlement: -1, Op: OpRecover, Err: fmt.Sprint(pv)})
	}
}

func callRecover(rec Recoverer, now time.Time) (err error, panicked bool, pv any) {
	defer func() {
		if v := recover(); v != nil {
			panicked, pv = true, asDesignPanic(v)
		}
	}()
	return rec.Recover(now), false, nil
}

// sample records a Bounded node's state after an attempt.
func (r *runner) sample(n, a, id int, at time.Duration) {
	b, ok := r.nodes[n].(Bounded)
	if !ok {
		return
	}
	size, span := b.StateSize(Epoch.Add(at)), b.StateSpan()
	r.mu.Lock()
	defer r.mu.Unlock()
	l := Load{Span: span}
	// Players: every player delivered to node n so far, across crashes:
	// counting the node's whole history can only raise the bound, so a
	// BoundedState failure is never an artifact of how the runner counts.
	// Players per node are few (3 in generated schedules): a slice.
	if p := r.s.Settlements[id].Player; !slices.Contains(r.players[n], p) {
		r.players[n] = append(r.players[n], p)
	}
	l.Players = len(r.players[n])
	// Recent: distinct settlements that arrived at node n in [at-span, at],
	// both ends included (again the larger count). Events are in time
	// order, so the scan stops at the first event older than the span.
	r.stamp++
	for i := len(r.events) - 1; i >= 0 && r.events[i].At >= at-span; i-- {
		e := &r.events[i]
		if e.Kind == EvArrive && e.Node == n && r.sett[e.Settlement].mark != r.stamp {
			r.sett[e.Settlement].mark = r.stamp
			l.Recent++
		}
	}
	r.recordLocked(Event{At: at, Kind: EvState, Node: n, Attempt: a, Settlement: id, Size: size, Bound: b.StateBound(l), Load: l})
}

// designPanic is a design's panic value with the frame that raised it.
type designPanic struct {
	value any
	frame string // "pkg.Func (file.go:line)", or "" if none was found
}

func (p designPanic) String() string {
	if p.frame == "" {
		return fmt.Sprint(p.value)
	}
	return fmt.Sprintf("%v (at %s)", p.value, p.frame)
}

// asDesignPanic wraps a recovered value with the design's frame of the
// panicking stack. It must be called from the deferred function that
// recovered v: the stack still holds the panicking frames then. The runner's
// own signals pass through unchanged.
func asDesignPanic(v any) any {
	switch v.(type) {
	case crashSignal, budgetSignal:
		return v
	}
	var pcs [64]uintptr
	n := runtime.Callers(2, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	afterPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			afterPanic = true
		case afterPanic && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, runnerPkg):
			// The file's base name, not its path: a history must not
			// depend on where the module was checked out.
			fn := f.Function[strings.LastIndexByte(f.Function, '/')+1:] // "pkg.(*T).Method"
			return designPanic{value: v, frame: fmt.Sprintf("%s (%s:%d)", fn, filepath.Base(f.File), f.Line)}
		}
		if !more {
			return designPanic{value: v}
		}
	}
}

// runnerPkg prefixes the runner's own functions (not those of a design in
// package faults_test).
const runnerPkg = "github.com/onceproof/onceproof/faults."
