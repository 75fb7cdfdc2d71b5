package engine

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// System is one run's world: a design's cluster as its world wraps it, so
// that the engine's nodes take a message number and the design's take the
// world's message and Env. A System may also be a Closer.
type System[X any] interface {
	// NewNode builds node id with empty memory on the run's durable state.
	// The runner calls it at the start for each node id and again after a
	// crash (then calls Recover if the node is a Recoverer).
	NewNode(id int, p *Port[X]) Node
}

// Node receives the world's messages, by number.
type Node interface {
	// Deliver handles one arrival of message msg at virtual time now. An
	// error is a Nack: the sender retries.
	Deliver(now time.Time, msg int) (Ack, error)
}

// Recoverer is a Node that recovers: the runner calls Recover on a node it
// built to replace a crashed one, before its first delivery, and on every
// node when the schedule drains (with now far past every lease).
type Recoverer interface {
	Recover(now time.Time) error
}

// Closer is a System that holds resources beyond memory (a database table,
// connections): Run calls Close once, after the run's last event.
type Closer interface {
	Close()
}

// Drainer is a System whose world drains in several passes: n > 1 runs
// every node's Recover (and the sender's resends) n times, DrainAfter
// apart, as a periodic job would (a loot world's compensation job: a pass
// cut short by a crash after it took a lease leaves that lease to the next
// one). Without it a run drains once. A frame with Outages drains more
// while they fail calls (drainPasses).
type Drainer interface {
	Drains() int
}

// AnswerRacer is a System whose answers may be overtaken: in an
// interleaved concurrent group the runner makes a node's answer a
// scheduling point (Deliver returned, the sender has not seen the reply), so
// another node's write may land between them, as it does on real goroutines
// while a reply is on the wire. A world that judges an answer against the
// state when it is given (loot's HonestAnswer: a cancel answered accepted
// while a settle already overwrote it) needs that point to find in the
// deterministic matrix what a real race shows. A world whose answers no
// later write can falsify (settlement's acks: a durable credit stays) leaves
// it out: it would only multiply the interleavings.
type AnswerRacer interface {
	RacesAnswers()
}

// Observer is a System that looks at a node after each of its attempts
// (settlements sample a node's memory there).
type Observer[X any] interface {
	AfterAttempt(p *Port[X], n Node, attempt, msg int, at time.Duration)
}

// RunOptions tunes Run. The zero value is the default.
type RunOptions struct {
	// MaxEvents stops the run when the history reaches this many events
	// (the verdict is Unknown then). 0 means DefaultMaxEvents.
	MaxEvents int
	// Free runs the groups of a Concurrent schedule on free-running
	// goroutines (the Go scheduler interleaves them, in parallel), for the
	// race detector: `go test -race` then sees the design's real data
	// races. Its history is not reproducible and Frame.Switches is
	// ignored; it may miss a bug but never reports a false one. Without
	// Free, Run interleaves the goroutines one at a time as Switches says.
	Free bool
	// InNode runs every send of a Concurrent schedule's same-instant
	// group on a goroutine of its own, several at once on one node, as
	// the Go runtime schedules them (innode.go): a sampled search whose
	// history is not reproducible; Frame.Switches and Free are ignored.
	// A world sets it for its in-node family.
	InNode bool
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
	// bubble, set by TestDesign for a run inside a testing/synctest bubble
	// (bubble.go), makes the runner sleep the bubble's clock to each
	// call's time and watch the run on it.
	bubble *bubbleState
	_      struct{}
}

// DefaultStall is RunOptions.Stall's default. A run records an event every
// few microseconds (a generated schedule runs in about 100 us, 10 times that
// under the race detector), so 5 s without one is a design that will never
// move again, not a slow one, and a user learns it within seconds rather
// than from go test's 10-minute timeout.
const DefaultStall = 5 * time.Second

// DefaultMaxEvents is the event budget of a run. A generated schedule has at
// most about 60 planned deliveries and 16 sends per message; a design
// makes a handful of effects per attempt, so an honest run stays far below
// 60 x 16 x 10 = 9,600 events. 1<<16 leaves room for hand-written schedules
// and stops a design that loops (e.g. recovery that keeps re-crediting).
const DefaultMaxEvents = 1 << 16

// DrainAfter is how long after the last planned delivery the runner calls
// Recover on every node: far past every lease and window a design may hold,
// so recovery may complete anything a crash left behind.
const DrainAfter = time.Hour

// Op names the runner uses in events besides the effects' own.
const (
	OpAck     = "ack"     // a crash after Deliver returned: the answer is lost
	OpRecover = "recover" // EvRecover of a Recoverer
	OpRebuild = "rebuild" // EvRecover of a node without Recover: rebuilt only
	OpDeliver = "deliver" // EvPanic raised inside Deliver
	OpPaused  = "paused"  // EvCrash of a call whose node crashed while it was paused
)

// crashSignal is the panic value of an injected crash. It is unexported so a
// design cannot fake or match it; the runner recovers it around Deliver.
type crashSignal struct{}

// budgetSignal is the panic value that aborts an attempt or a Recover once
// the event budget is spent, so a design that loops through env calls
// cannot hang the run.
type budgetSignal struct{}

// Messages tells the engine about a world's messages: how many a schedule
// has (its deliveries name 0..N-1), and how the engine's own texts name
// one (Letter "s" and Noun "settlement": s3).
type Messages struct {
	N      int
	Letter string
	Noun   string
}

// Run plays frame f (its deliveries naming the messages m counts) against sys and
// returns what happened: a pure function of (sys, f), the same trace every
// time (RunOptions.Free aside). The sender is at-least-once: it resends
// what was not acked RetryAfter later, to the next node, up to MaxAttempts
// sends, again after the drain (every node's Recover, DrainAfter past the
// last send), then gives up (EvGiveUp). Faults fire at (attempt or Recover
// call, effect); a crash or panic rebuilds the node and recovers it; a
// Pause lets the world go on and resumes the call later. Same-instant sends
// of a Concurrent schedule run on one goroutine per node, interleaved as
// Switches says. Run panics on a frame ValidateFrame rejects; a world
// validates its own part first. A panic that escapes the run outside the
// design's Deliver and Recover (the engine's, or the System's own code) is
// raised again on the caller's goroutine as a HarnessError, where it can
// be recovered; on the run's own goroutine it would kill the process.
func Run[X any](sys System[X], f Frame, m Messages, opt RunOptions) Trace[X] {
	if err := ValidateFrame(f, m); err != nil {
		panic("engine.Run: invalid schedule: " + err.Error())
	}
	r := newRunner(sys, f, m, opt)
	// The run goes on its own goroutine so that the watchdog can give up on
	// a design that blocks: the caller gets a Stalled trace, the blocked
	// goroutine is abandoned (it stops at its next env call).
	r.stall = opt.Stall
	if r.stall <= 0 {
		r.stall = DefaultStall
	}
	r.finish = make(chan []Event[X], 2)
	body := func() {
		defer func() {
			if v := recover(); v != nil {
				e := asHarnessError(v)
				r.harness = &e // read by Run after the send below
			}
			r.finish <- nil
		}()
		r.run()
	}
	if r.bubble != nil {
		r.startBubbled(body)
	} else {
		watch(r)
		runOn(body)
	}
	events := <-r.finish
	if r.bubble != nil {
		r.stopBubbled()
	} else if events == nil {
		unwatch(r)
	}
	if events != nil {
		return Trace[X]{Events: events, Stalled: true}
	}
	if c, ok := sys.(Closer); ok {
		c.Close()
	}
	if r.harness != nil {
		panic(*r.harness)
	}
	return Trace[X]{Events: r.events, Exhausted: r.exhausted}
}

// HarnessError is a panic that escaped a run outside the design's Deliver
// and Recover, which no property judges: a bug of the engine or of a
// world's own code (its System, generator, properties), or of design code
// a world calls outside them (a node's constructor, its state report).
// Run raises it on its caller's goroutine; the matrix and the kit recover
// it and report it as the cell's, naming the run (Design, Family, Seed,
// Schedule); the other cells run on.
type HarnessError struct {
	Design string
	Family Family
	// Seed names the run: a generated family's generator seed, an
	// exhaustive family's position in it (from 1).
	Seed uint64
	// Schedule is the run's schedule as a .sched file ("" if the
	// generator panicked before there was one).
	Schedule string
	Value    string // the panic's value
	Frame    string // the frame that raised it: "pkg.Func (file.go:line)"
	Stack    string // the panicking goroutine's stack
}

func (e HarnessError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "harness error (a panic outside the design's Deliver and Recover, which no property judges: the engine's, a world's, or design code the world calls, as its frame says): %s", e.Value)
	if e.Frame != "" {
		fmt.Fprintf(&b, " (at %s)", e.Frame)
	}
	if e.Design == "" {
		return b.String() // raised by Run: its caller names the run
	}
	fmt.Fprintf(&b, "\nrun: design %s, family %s, seed %d\n", e.Design, e.Family, e.Seed)
	if e.Schedule == "" {
		b.WriteString("no schedule text (the generator panicked before there was one, or it does not format): the world's Generate(family, seed) reproduces it\n")
	} else {
		// replay runs the schedule once, outside the matrix: Run raises
		// the panic again there, with its stack.
		b.WriteString("To replay: save the schedule below as FILE.sched and run `go run ./cmd/onceproof replay FILE.sched` from the module root\n")
		b.WriteString(e.Schedule)
		if !strings.HasSuffix(e.Schedule, "\n") {
			b.WriteByte('\n')
		}
	}
	if e.Stack != "" {
		b.WriteString("stack:\n" + e.Stack)
	}
	return b.String()
}

// catch runs f and returns the panic that escaped it as a HarnessError
// (nil: none), for a caller of Run that must go on (TestDesign's replay of
// a saved file).
func catch(f func()) (e *HarnessError) {
	defer func() {
		if v := recover(); v != nil {
			he := asHarnessError(v)
			e = &he
		}
	}()
	f()
	return nil
}

// asHarnessError is v, a panic that escaped a run, with the frame that
// raised it and the stack. Like asDesignPanic it must be called from the
// deferred function that recovered v; a HarnessError (raised again from
// another goroutine) passes through unchanged.
func asHarnessError(v any) HarnessError {
	if e, ok := v.(HarnessError); ok {
		return e
	}
	frame := panicFrame(func(string) bool { return false })
	return HarnessError{Value: fmt.Sprint(v), Frame: frame, Stack: string(debug.Stack())}
}

// abandon gives up on a run that made no progress for r.stall: it appends
// EvStall to a copy of the history so far and hands it to Run. The
// watchdog calls it.
func (r *runner[X]) abandon() {
	r.abandonWith(fmt.Sprintf("no progress for %s: the design is blocked inside Deliver or Recover (a Cluster lock held across an Env call, or a wait for another delivery?)", r.stall))
}

// abandonWith gives up on the run for the reason why, as abandon does.
func (r *runner[X]) abandonWith(why string) {
	if events := r.giveUp(why); events != nil {
		r.finish <- events
	}
}

// giveUp marks the run abandoned and returns its history so far with
// EvStall (why), or nil if it was abandoned already.
func (r *runner[X]) giveUp(why string) []Event[X] {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.abandoned {
		return nil
	}
	r.abandoned = true
	r.overrun.Store(true) // the abandoned goroutine stops at its next env call
	ev := Event[X]{Seq: len(r.events), At: r.lastAtLocked(), Kind: EvStall, Node: -1, Attempt: -1, Msg: -1, Err: why}
	return append(slices.Clip(r.events), ev)
}

// lastAtLocked is the virtual time of the latest event (r.mu held).
func (r *runner[X]) lastAtLocked() time.Duration {
	if n := len(r.events); n > 0 {
		return r.events[n-1].At
	}
	return 0
}

// item is one send the sender makes: a planned delivery or a retry.
type item struct {
	at       time.Duration
	msg      int
	node     int
	delivery int // index into Frame.Deliveries, -1 for a retry
}

// runner is one Run. In order: planned deliveries, sender retries and the
// resumptions of paused calls are processed by (At, planned before retries
// before resumptions, then insertion order), each delivery an attempt
// numbered from 0 in the order Node.Deliver is called; planned deliveries
// are sent regardless of answers. Every Env call is an effect; a crash
// panics inside it with a private value, recovered here (EvCrash), and a
// crash whose effect index is past the effects an attempt made fires
// after Deliver returned (the answer is lost). In a concurrent group, a
// goroutine parks at every scheduling point (before each attempt and each
// env call) and the baton holder chooses who goes on (interleave.go);
// attempts are numbered when they start, so Event.Attempt tells which
// goroutine ran each event. With RunOptions.Free the goroutines run freely
// and the history is shared under mu. A frame with a Pause runs each
// attempt as a coroutine (pause.go).
type runner[X any] struct {
	f     Frame
	m     Messages
	sys   System[X]
	nodes []Node
	ports []*Port[X]

	// mu guards what goroutines of the concurrent family share: the
	// history, the attempt counter, the messages' seen marks.
	mu       sync.Mutex
	events   []Event[X]
	attempts int      // next attempt number
	scratch  Event[X] // scratchLocked's

	// msgs is per message: seen under mu, the rest the sender's (touched
	// only between attempt groups).
	msgs []msgState

	// Sender state, touched only by the sender (the run goroutine).
	retries   []item
	retryHead int
	lastAt    time.Duration

	// Pauses (pause.go): whether the frame has any, the paused calls
	// waiting to resume (sorted by their time), and each node's
	// generation (bumped at every rebuild, so a call paused on a node that
	// crashed meanwhile is known dead).
	pauses  bool
	resumes []*paused
	gen     []int
	// deliveryFaults counts the faults that target a planned delivery
	// (Fault.OnDelivery): the last ones of f.Faults.
	deliveryFaults int
	// outages: what each of f.Outages has still to fail (outage.go).
	outages outageState

	// free: opt.Free (concurrent groups run unscheduled). choices counts
	// the scheduler's choices so far (k in Frame.Switches); arity, when
	// not nil (tests), receives the number of runnable goroutines at each.
	free       bool
	inNode     bool
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
	finish    chan []Event[X]
	// The watchdog's own: the progress it last saw and when it changed.
	seen      uint64
	seenSince time.Time

	// An in-node group's Observer calls and panics' rebuilds, deferred
	// to the group's end (under mu; innode.go).
	observed, rebuilds []observation

	// harness is the panic that escaped the run's goroutine (Run raises
	// it again on the caller's).
	harness *HarnessError

	// A run in a bubble (bubble.go): its state outside, and the stall
	// timer on the bubble's clock, stopped while the runner sleeps (vmu
	// guards the timer's fields; vseen is the progress it last saw).
	bubble    *bubbleState
	vstall    *time.Timer
	vmu       sync.Mutex
	vsleeping bool
	vfrom     time.Duration // the span sleepTo is sleeping across
	vto       time.Duration
	vnow      atomic.Int64 // the bubble's clock as sleepTo last saw it (since Epoch)
	vdone     bool
	vseen     uint64
}

type msgState struct {
	seen     bool // arrived somewhere (under mu)
	acked    bool // the sender got an ack
	pending  bool // a retry is queued
	sends    int  // sends so far, planned and retries
	limit    int  // sends allowed before the sender gives up
	lastNode int  // node of the latest send, for round robin
}

func newRunner[X any](sys System[X], f Frame, m Messages, opt RunOptions) *runner[X] {
	r := &runner[X]{
		f:         f,
		m:         m,
		sys:       sys,
		nodes:     make([]Node, f.Nodes),
		ports:     make([]*Port[X], f.Nodes),
		msgs:      make([]msgState, m.N),
		gen:       make([]int, f.Nodes),
		pauses:    f.HasPause(),
		maxEvents: opt.MaxEvents,
		free:      opt.Free,
		inNode:    opt.InNode,
		arity:     opt.Choices,
		outages:   newOutageState(f),
		bubble:    opt.bubble,
	}
	if r.maxEvents <= 0 {
		r.maxEvents = DefaultMaxEvents
	}
	for _, x := range f.Faults {
		if x.OnDelivery {
			r.deliveryFaults++
		}
	}
	// A first delivery to a three-effect design that reports its state
	// makes 6 events (arrive, claim, credit, commit, ack, state sample), a
	// duplicate 3 or 4; 6 per delivery plus a few recoveries fits a clean
	// run of such a design (ref) in one allocation, and append grows the
	// rest. With 5, ref's run of long-history's deep schedule (600,140
	// events for 100,036 deliveries) grew its history once, by a copy of
	// 80 MB that was a quarter of the run's CPU. More wastes memory and
	// time: histories above 32 KiB are large heap objects, whose
	// allocation takes the heap lock.
	r.events = make([]Event[X], 0, min(6*len(f.Deliveries)+16, r.maxEvents+1))
	for i := range r.msgs {
		r.msgs[i].limit = f.MaxAttempts
	}
	for id := range f.Nodes {
		p := &Port[X]{r: r, node: id, idle: call{attempt: -1, msg: -1}}
		p.cur = &p.idle
		r.ports[id] = p
		r.nodes[id] = sys.NewNode(id, p)
	}
	return r
}

// record appends e to the history; it is safe for concurrent use.
func (r *runner[X]) record(e Event[X]) {
	r.mu.Lock()
	r.recordLocked(e)
	r.mu.Unlock()
}

func (r *runner[X]) recordLocked(e Event[X]) {
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

// scratchLocked is e in the runner's scratch event (r.mu held), for a
// world's func to fill before recordLocked copies it into the history: an
// event whose address a func is given escapes to the heap, and one such
// allocation per credit and per state sample was a third of the runner's
// own (r.mu held until then).
func (r *runner[X]) scratchLocked(e Event[X]) *Event[X] {
	r.scratch = e
	return &r.scratch
}

func (r *runner[X]) over() bool { return r.overrun.Load() }

// next pops the next send: planned deliveries before retries at equal At.
// It returns false when both are exhausted.
func (r *runner[X]) next(pi *int) (item, bool) {
	var plan *Delivery
	if *pi < len(r.f.Deliveries) {
		plan = &r.f.Deliveries[*pi]
	}
	hasRetry := r.retryHead < len(r.retries)
	switch {
	case plan != nil && (!hasRetry || plan.At <= r.retries[r.retryHead].at):
		*pi++
		return item{at: plan.At, msg: plan.Msg, node: plan.Node, delivery: *pi - 1}, true
	case hasRetry:
		it := r.retries[r.retryHead]
		r.retryHead++
		return it, true
	}
	return item{}, false
}

// peekAt is the At of the next send, if any.
func (r *runner[X]) peekAt(pi int) (time.Duration, bool) {
	hasRetry := r.retryHead < len(r.retries)
	if pi < len(r.f.Deliveries) {
		at := r.f.Deliveries[pi].At
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

func (r *runner[X]) run() {
	pi := 0
	r.loop(&pi)
	if r.stopped {
		return
	}
	drains := 1
	if d, ok := r.sys.(Drainer); ok {
		drains = max(1, d.Drains())
	}
	var drainAt time.Duration
	// After the first drains passes, one more while any of the last
	// drains passes failed a call for an outage (drainPasses says why it
	// ends, and its bound).
	limit, sinceOutage := drainPasses(r.f, drains), 0
	for pass := 0; pass < limit && (pass < drains || sinceOutage < drains); pass++ {
		failed := r.outageFailed()
		// Drain: recovery far past every lease, then the sender's last
		// resends.
		drainAt = r.lastAt + DrainAfter
		if r.drainCalls() {
			r.sleepTo(drainAt)
		}
		for id := range r.nodes {
			if rec, ok := r.nodes[id].(Recoverer); ok {
				r.recover(id, rec, drainAt)
			}
		}
		// Every unacked message is resent at one time, so the retry queue
		// stays sorted by At (each later retry is RetryAfter after its
		// attempt).
		resendAt := drainAt + r.f.RetryAfter
		for id := range r.msgs {
			st := &r.msgs[id]
			if st.seen && !st.acked && !r.f.GiveUp {
				st.limit = st.sends + r.f.MaxAttempts
				if !st.pending {
					st.pending = true
					r.retries = append(r.retries, item{at: resendAt, msg: id, node: r.nextNode(id), delivery: -1})
				}
			}
		}
		r.loop(&pi)
		if r.stopped {
			return
		}
		r.lastAt = max(r.lastAt, drainAt)
		sinceOutage++
		if r.outageFailed() > failed {
			sinceOutage = 0
		}
	}
	// The sender gives up on what is still unacked: the world's properties
	// judge whether it took effect all the same (by a retry whose answer
	// was lost, or by Recover).
	for id := range r.msgs {
		if r.msgs[id].seen && !r.msgs[id].acked {
			r.record(Event[X]{At: max(r.lastAt, drainAt), Kind: EvGiveUp, Node: -1, Attempt: -1, Msg: id, Err: fmt.Sprintf("the sender gave up on %s after %d sends", r.msgName(id), r.msgs[id].sends)})
		}
	}
}

// drainCalls reports whether the drain will call the design: a node is a
// Recoverer, or the sender will resend something. Only then does a run in
// a bubble sleep its clock to the drain: otherwise nothing of the design
// runs there, the history is the same, and a background loop of the
// design is spared DrainAfter of wakes (a 25 ms cleanup ticker: 144,000
// a node, some 100 ms of CPU a run).
func (r *runner[X]) drainCalls() bool {
	for _, n := range r.nodes {
		if _, ok := n.(Recoverer); ok {
			return true
		}
	}
	for id := range r.msgs {
		if st := &r.msgs[id]; st.seen && !st.acked && !r.f.GiveUp {
			return true
		}
	}
	return false
}

// msgName names message id in the runner's own event texts.
func (r *runner[X]) msgName(id int) string { return fmt.Sprintf("%s%d", r.m.Letter, id) }

// nextNode is the node after the one id was last sent to (round robin).
func (r *runner[X]) nextNode(id int) int {
	return (r.msgs[id].lastNode + 1) % r.f.Nodes
}

func (r *runner[X]) loop(pi *int) {
	for {
		if r.over() {
			r.stopped, r.exhausted = true, true
			r.stopPaused()
			r.record(Event[X]{At: r.lastAt, Kind: EvBudget, Node: -1, Attempt: -1, Msg: -1, Err: fmt.Sprintf("event budget of %d spent", r.maxEvents)})
			return
		}
		if r.f.Concurrent {
			if !r.group(pi) {
				return
			}
			continue
		}
		if r.resumeDue(*pi) {
			continue
		}
		it, ok := r.next(pi)
		if !ok {
			return
		}
		if it.delivery < 0 {
			r.msgs[it.msg].pending = false
			if r.msgs[it.msg].acked {
				continue
			}
		}
		r.lastAt = it.at
		r.sleepTo(it.at)
		r.msgs[it.msg].sends++
		r.msgs[it.msg].lastNode = it.node
		if r.pauses {
			r.startPausable(it)
			continue
		}
		acked, _ := r.attempt(it, nil)
		r.answer(it, acked, it.at)
	}
}

// answer is the sender's reaction to one attempt, whose answer came at at.
func (r *runner[X]) answer(it item, acked bool, at time.Duration) {
	id := it.msg
	if acked {
		r.msgs[id].acked = true
		return
	}
	if r.msgs[id].acked || r.msgs[id].pending || r.msgs[id].sends >= r.msgs[id].limit {
		return
	}
	r.msgs[id].pending = true
	r.retries = append(r.retries, item{at: at + r.f.RetryAfter, msg: id, node: (it.node + 1) % r.f.Nodes, delivery: -1})
}

// group runs every send due at the next At at once (the concurrent family).
func (r *runner[X]) group(pi *int) bool {
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
			r.msgs[it.msg].pending = false
			if r.msgs[it.msg].acked {
				continue
			}
		}
		r.msgs[it.msg].sends++
		r.msgs[it.msg].lastNode = it.node
		items = append(items, it)
	}
	if len(items) == 0 {
		// Every send due at this instant was a retry of a message acked
		// since it was queued: one copy nacked (say, "a live owner holds
		// the lease") while a sibling copy on another node settled it in
		// the same group. Nothing is sent, so nothing happens at this
		// instant: no attempt, no scheduling choice, and lastAt stays,
		// as the sequential loop does for a dropped retry. The next
		// instant's sends are a group of their own.
		return true
	}
	r.lastAt = at
	r.sleepTo(at)
	acked := make([]bool, len(items))
	// One goroutine per node, in the order of the node's first item in the
	// group (the order Switches indexes).
	var work [][]int
	slot := make([]int, r.f.Nodes)
	for i, it := range items {
		if slot[it.node] == 0 {
			work = append(work, nil)
			slot[it.node] = len(work)
		}
		w := slot[it.node] - 1
		work[w] = append(work[w], i)
	}
	if r.inNode {
		r.inNodeGroup(items, acked)
	} else if r.free {
		var wg sync.WaitGroup
		var esc escaped
		for _, mine := range work {
			esc.goKept(&wg, func() {
				for _, i := range mine {
					acked[i], _ = r.attempt(items[i], nil)
				}
			})
		}
		wg.Wait()
		esc.raise()
	} else {
		r.interleave(items, work, acked)
	}
	for i, it := range items {
		r.answer(it, acked[i], it.at)
	}
	return true
}

// attempt delivers one send to its node and reports whether the sender got
// an ack, and when the answer came (later than it.at after a Pause). It touches only its own node, its port, and (under mu) the shared
// history, so goroutines on distinct nodes may run it at once. yield, if
// not nil, lets the attempt pause (it runs as a coroutine then).
func (r *runner[X]) attempt(it item, yield func() bool) (bool, time.Duration) {
	n, id := it.node, it.msg
	p := r.ports[n]

	r.mu.Lock()
	a := r.attempts
	r.attempts++
	first := !r.msgs[id].seen
	r.msgs[id].seen = true
	r.recordLocked(Event[X]{At: it.at, Kind: EvArrive, Node: n, Attempt: a, Msg: id, First: first, Delivery: it.delivery})
	r.mu.Unlock()

	c := p.begin(a, id, it.at, r.attemptFaults(a, it.delivery))
	c.yield = yield
	nd := r.nodes[n]
	ack, err, panicked, pv := deliver(nd, Epoch.Add(it.at), id)
	if p.multi == nil {
		p.cur = c // a paused call may have been swapped out and back
	}
	at, effects, crashed, killed := c.at, c.effects, c.crashed, c.killed
	p.end()

	acked, rebuild := false, false
	if _, budget := pv.(budgetSignal); panicked && budget {
		return false, at // the loop stops the run
	}
	switch {
	case killed:
		// The node crashed while this call was paused: the process is
		// gone, and the node was rebuilt already.
		r.record(Event[X]{At: at, Kind: EvCrash, Node: n, Attempt: a, Msg: id, Op: OpPaused, Fault: Pause})
		return false, at
	case panicked && !crashed:
		r.record(Event[X]{At: at, Kind: EvPanic, Node: n, Attempt: a, Msg: id, Op: OpDeliver, Err: fmt.Sprint(pv)})
		rebuild = true
	case crashed:
		// The port recorded EvCrash (the design may even have recovered
		// the panic itself: the node is dead all the same).
		r.rebuild(n, at)
	default:
		if f, ok := r.lostAck(c.faults, effects); ok {
			r.record(Event[X]{At: at, Kind: EvCrash, Node: n, Attempt: a, Msg: id, Op: OpAck, Fault: f.Kind})
			r.rebuild(n, at)
			break
		}
		if _, races := r.sys.(AnswerRacer); races && p.park != nil {
			p.park() // the reply is on the wire (AnswerRacer)
		}
		ev := Event[X]{At: at, Kind: EvAck, Node: n, Attempt: a, Msg: id, Ack: ack}
		if err != nil {
			ev.Ack, ev.Err = Nack, err.Error()
		}
		r.record(ev)
		acked = err == nil && ack.Acked()
	}
	r.afterAttempt(n, a, id, at, rebuild)
	return acked, at
}

// deliver calls Deliver, recovering any panic (pv is then a designPanic,
// unless it is one of the runner's own signals).
func deliver(nd Node, now time.Time, msg int) (ack Ack, err error, panicked bool, pv any) {
	defer func() {
		if v := recover(); v != nil {
			panicked, pv = true, asDesignPanic(v)
		}
	}()
	ack, err = nd.Deliver(now, msg)
	return ack, err, false, nil
}

// faultsOf returns the faults of attempt (or Recover call) a, without the
// delivery-targeted ones (f.Faults is sorted: those come last).
func (r *runner[X]) faultsOf(a int) []Fault {
	fs := r.f.Faults
	if len(fs) == 0 {
		return nil
	}
	i := sort.Search(len(fs), func(i int) bool { return fs[i].OnDelivery || fs[i].Attempt >= a })
	j := i
	for j < len(fs) && !fs[j].OnDelivery && fs[j].Attempt == a {
		j++
	}
	return fs[i:j]
}

// attemptFaults returns the faults of attempt a, which carries planned
// delivery d (-1 for a retry): those numbered a, and those targeting d
// (OnDelivery), in effect order.
func (r *runner[X]) attemptFaults(a, d int) []Fault {
	fs := r.faultsOf(a)
	if d < 0 || r.deliveryFaults == 0 {
		return fs
	}
	out := slices.Clone(fs)
	for _, f := range r.f.Faults[len(r.f.Faults)-r.deliveryFaults:] {
		if f.Attempt == d {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b Fault) int { return a.Effect - b.Effect })
	return out
}

// lostAck returns the crash fault among an attempt's faults that fires
// after Deliver returned: the first crash whose effect index is past the
// effects made.
func (r *runner[X]) lostAck(faults []Fault, effects int) (Fault, bool) {
	for _, f := range faults {
		if f.Effect >= effects && (f.Kind == CrashBefore || f.Kind == CrashAfter) {
			return f, true
		}
	}
	return Fault{}, false
}

// rebuild replaces node n's memory after a crash and runs its Recover.
func (r *runner[X]) rebuild(n int, at time.Duration) {
	r.gen[n]++
	r.nodes[n] = r.sys.NewNode(n, r.ports[n])
	if rec, ok := r.nodes[n].(Recoverer); ok {
		r.recover(n, rec, at)
		return
	}
	r.record(Event[X]{At: at, Kind: EvRecover, Node: n, Attempt: -1, Msg: -1, Op: OpRebuild})
}

// recover runs rec.Recover at virtual time at, as the run's next recovery
// call (faults at Recovery(k) fire inside it). A crash inside it replaces
// the node, which recovers again, as the next call.
func (r *runner[X]) recover(n int, rec Recoverer, at time.Duration) {
	p := r.ports[n]
	k := r.recoveries
	r.recoveries++
	c := p.begin(-1, -1, at, r.faultsOf(Recovery(k)))
	err, panicked, pv := callRecover(rec, Epoch.Add(at))
	crashed := c.crashed
	p.end()
	if _, budget := pv.(budgetSignal); panicked && budget {
		return
	}
	if crashed {
		// The port recorded EvCrash: the node died mid-recovery.
		r.rebuild(n, at)
		return
	}
	ev := Event[X]{At: at, Kind: EvRecover, Node: n, Attempt: -1, Msg: -1, Op: OpRecover}
	if err != nil {
		ev.Err = err.Error()
	}
	r.record(ev)
	if panicked {
		r.record(Event[X]{At: at, Kind: EvPanic, Node: n, Attempt: -1, Msg: -1, Op: OpRecover, Err: fmt.Sprint(pv)})
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
	return designPanic{value: v, frame: panicFrame(harness)}
}

// panicFrame is the first frame of the panicking stack, below the panic,
// that is neither the runtime's nor one skip names: "pkg.Func
// (file.go:line)" ("" if none). It must be called from a deferred
// function that recovered the panic, through one helper (asDesignPanic,
// asHarnessError): the stack still holds the panicking frames then.
func panicFrame(skip func(fn string) bool) string {
	var pcs [64]uintptr
	n := runtime.Callers(3, pcs[:])
	frames := runtime.CallersFrames(pcs[:n])
	afterPanic := false
	for {
		f, more := frames.Next()
		switch {
		case f.Function == "runtime.gopanic":
			afterPanic = true
		case afterPanic && !strings.HasPrefix(f.Function, "runtime.") && !skip(f.Function):
			// The file's base name, not its path: a history must not
			// depend on where the module was checked out.
			fn := f.Function[strings.LastIndexByte(f.Function, '/')+1:] // "pkg.(*T).Method"
			return fmt.Sprintf("%s (%s:%d)", fn, filepath.Base(f.File), f.Line)
		}
		if !more {
			return ""
		}
	}
}

// escaped keeps the first panic that escaped a goroutine of a concurrent
// group, for the run's goroutine to raise again once the group is over:
// raised on the group's own goroutine it would kill the process.
type escaped struct {
	mu sync.Mutex
	e  *HarnessError
}

func (x *escaped) keep(e HarnessError) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.e == nil {
		x.e = &e
	}
}

// goKept runs f on a goroutine of wg and keeps a panic that escapes it.
func (x *escaped) goKept(wg *sync.WaitGroup, f func()) {
	wg.Go(func() {
		defer func() {
			if v := recover(); v != nil {
				x.keep(asHarnessError(v))
			}
		}()
		f()
	})
}

// raise panics with the kept panic, if any (on the run's goroutine: Run
// recovers it there).
func (x *escaped) raise() {
	x.mu.Lock()
	e := x.e
	x.mu.Unlock()
	if e != nil {
		panic(*e)
	}
}

// harness reports whether fn is the engine's own function (not a
// design's, even one in a _test package of its own), or a coroutine's.
func harness(fn string) bool {
	return strings.HasPrefix(fn, "github.com/onceproof/onceproof/engine.") || strings.HasPrefix(fn, "iter.")
}
