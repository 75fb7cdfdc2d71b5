package engine

import (
	"errors"
	"fmt"
	"runtime"
	"time"
)

// ErrInjected marks an error the runner injected before an effect ran:
// nothing happened.
var ErrInjected = errors.New("faults: injected failure")

// ErrTimeout marks an error the runner injected after an effect ran: it
// happened, the caller was told it timed out.
var ErrTimeout = errors.New("faults: timeout after success")

// Port is one node id's connection to the run: the fault points a world's
// Env is built on. It outlives the node's crashes (the rebuilt node gets
// the same port). Every effect is numbered within its call (an attempt or
// a Recover) and may be crashed around, failed, timed out or paused before;
// Effect is for the design's own code (a store call), Apply for the
// world's services (a ledger, a lock, an inventory), whose events the
// world fills. Safe for the concurrent groups' goroutines: one per node.
type Port[X any] struct {
	r    *runner[X]
	node int
	// cur is the call running on this node now: an attempt or a Recover.
	// A paused attempt keeps its own call; the runner swaps it back in
	// when it resumes (a node may take other calls while one is paused, as
	// a server does on its other threads).
	cur  *call
	idle call
	// spare is the call begin reuses when the frame has no Pause, so an
	// attempt allocates none: without pauses a node runs one call at a
	// time, and the runner reads a call's fields before it begins the
	// next (a Recover after a crash) on the node. A paused call outlives
	// its turn, so with pauses every call is its own.
	spare call
	// park, while the node's goroutine runs in an interleaved concurrent
	// group, hands the baton back to the scheduler and waits for it: every
	// env call is a scheduling point.
	park func()
	// after, if set (Observe), runs after every Effect ran.
	after func()
	// multi, while the node runs several calls at once (an in-node group,
	// innode.go), holds each goroutine's call instead of cur.
	multi *callTable
}

// Observe makes f run after every Effect of the port ran (before a crash
// after it or its timeout is reported): a world that audits the design's
// durable state after each store call records what it sees there, at the
// call's time, whatever happens to the node next.
func (p *Port[X]) Observe(f func()) { p.after = f }

// call is the state of one attempt or Recover on a port.
type call struct {
	attempt int // -1 for a Recover
	msg     int // message of the attempt, -1 if none
	at      time.Duration
	faults  []Fault // the call's faults
	effects int     // env calls made so far
	crashed bool    // an injected crash fired in the call
	// yield hands control back to the runner for a Pause (nil: the call
	// cannot pause); it reports false when the run stops meanwhile.
	yield func() bool
	// killed: the node crashed (another call's fault) while this call was
	// paused: the process it ran in is gone.
	killed bool
}

// Node is the node id of the port.
func (p *Port[X]) Node() int { return p.node }

// At is the virtual time of the running call now (a Pause moves it on).
func (p *Port[X]) At() time.Duration { return p.current().at }

// Attempt is the running attempt's number (-1 inside Recover).
func (p *Port[X]) Attempt() int { return p.current().attempt }

// Msg is the message the running attempt carries (-1 inside Recover).
func (p *Port[X]) Msg() int { return p.current().msg }

func (p *Port[X]) begin(attempt, msg int, at time.Duration, faults []Fault) *call {
	if p.multi != nil {
		// Calls at once on one node (innode.go): each its own record.
		c := &call{attempt: attempt, msg: msg, at: at, faults: faults}
		p.multi.enter(c)
		return c
	}
	c := &p.spare
	if p.r.pauses {
		c = new(call)
	}
	*c = call{attempt: attempt, msg: msg, at: at, faults: faults}
	p.cur = c
	return c
}

func (p *Port[X]) end() {
	if p.multi != nil {
		p.multi.leave()
		return
	}
	p.cur = &p.idle
}

// point numbers the next effect and returns the fault injected there. A
// Pause stalls the call first and is not returned.
func (p *Port[X]) point(op string) (FaultKind, bool) {
	if p.park != nil {
		p.park()
	} else if p.multi != nil {
		runtime.Gosched() // a store round trip: another call runs meanwhile (innode.go)
	}
	r := p.r
	r.progress.Add(1)
	if r.overrun.Load() {
		panic(budgetSignal{})
	}
	c := p.current()
	if c.crashed {
		// A dead node's code is still unwinding (or swallowed the crash
		// panic): it must not touch the world again.
		panic(crashSignal{})
	}
	k := c.effects
	c.effects++
	for _, f := range c.faults {
		if f.Effect != k {
			continue
		}
		if f.Kind == Pause {
			p.pause(op, f)
			return 0, false
		}
		return f.Kind, true
	}
	return 0, false
}

// pause stalls the running call for f.For: the runner goes on with the
// world and resumes the call then (pause.go).
func (p *Port[X]) pause(op string, f Fault) {
	c := p.cur
	if c.yield == nil {
		return // not an attempt (Validate keeps pauses out of Recover and groups)
	}
	ev := p.Event(EvPause, op)
	ev.Fault, ev.Err = Pause, fmt.Sprintf("the node stalls for %s", f.For)
	p.r.record(ev)
	c.at += f.For
	if !c.yield() {
		panic(budgetSignal{}) // the run stopped while the call was paused
	}
	p.cur = c
	if c.killed {
		c.crashed = true
		panic(crashSignal{})
	}
}

// Event returns an event of kind about the running call (At, Node,
// Attempt, Msg and Op set), for a world to fill and Record.
func (p *Port[X]) Event(kind EventKind, op string) Event[X] {
	c := p.current()
	return Event[X]{At: c.at, Kind: kind, Node: p.node, Attempt: c.attempt, Msg: c.msg, Op: op}
}

func (p *Port[X]) crash(op string, k FaultKind) {
	ev := p.Event(EvCrash, op)
	ev.Fault = k
	p.r.record(ev)
	p.current().crashed = true
	panic(crashSignal{})
}

func (p *Port[X]) inject(op string, k FaultKind, base error) error {
	err := fmt.Errorf("%s: %w", op, base)
	ev := p.Event(EvFault, op)
	ev.Fault, ev.Err = k, err.Error()
	p.r.record(ev)
	return err
}

// Effect runs fn, the design's own code for one durable operation named op
// (a store call), at a fault point: the runner may fail it before fn runs
// (an error wrapping ErrInjected), run fn and then report an error wrapping
// ErrTimeout (the effect happened, the caller cannot know), crash the node
// just before or just after fn, or pause the node before it. It records
// EvEffect with fn's error. fn must be what one store call is in
// production: one atomic round trip; the runner never interleaves inside it.
func (p *Port[X]) Effect(op string, fn func() error) error {
	var err error
	if injected := p.faulted(op, DepStore, func() {
		err = fn()
		ev := p.Event(EvEffect, op)
		if err != nil {
			ev.Err = err.Error()
		}
		p.r.record(ev)
		if p.after != nil {
			p.after()
		}
	}); injected != nil {
		return injected
	}
	return err
}

// Apply is one call of a world's own service (the settlement ledger, the
// loot lock and inventory) at a fault point, faults as for Effect. fn runs
// under the runner's lock, so the service needs no lock of its own, and
// fills the event of kind the history records (its Msg, Detail, Err); it
// does not run on an injected failure. Apply returns only injected errors.
func (p *Port[X]) Apply(op string, kind EventKind, fn func(ev *Event[X])) error {
	return p.faulted(op, p.r.dependency(op), func() {
		r := p.r
		r.mu.Lock()
		ev := r.scratchLocked(p.Event(kind, op))
		fn(ev)
		r.recordLocked(*ev)
		r.mu.Unlock()
	})
}

// faulted runs the effect op of dependency dep at the next fault point: a
// failure instead of it while dep is down (Outage), else a crash before or
// after it, a failure instead of it (ErrInjected), or a timeout reported
// after it ran (ErrTimeout); it returns the injected error, if any.
func (p *Port[X]) faulted(op, dep string, run func()) error {
	k, has := p.point(op)
	if _, down := p.r.down(dep, p.current().at); down {
		return p.inject(op, FailBefore, fmt.Errorf("%s is down: %w", dep, ErrInjected))
	}
	if has {
		switch k {
		case CrashBefore:
			p.crash(op, k)
		case FailBefore:
			return p.inject(op, k, ErrInjected)
		}
	}
	run()
	if has {
		switch k {
		case CrashAfter:
			p.crash(op, k)
		case TimeoutAfter:
			return p.inject(op, k, ErrTimeout)
		}
	}
	return nil
}

// Record appends a world event that is not an effect (an observation: a
// state sample, what the durable state says after a call) under the
// runner's lock. fill, if not nil, completes ev with the history so far in
// view and may decline (false): nothing is recorded then.
func (p *Port[X]) Record(ev Event[X], fill func(ev *Event[X], past []Event[X]) bool) {
	r := p.r
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.scratchLocked(ev)
	if fill != nil && !fill(e, r.events) {
		return
	}
	r.recordLocked(*e)
}
