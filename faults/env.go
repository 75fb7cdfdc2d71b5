package faults

import (
	"fmt"
	"time"
)

// env is the Env of one node id. It outlives the node's crashes (the
// rebuilt node gets the same env). Only the goroutine running the node's
// attempt touches its fields; the shared history and ledger are under the
// runner's mutex.
type env struct {
	r       *runner
	node    int
	attempt int // current attempt, -1 outside one (recovery)
	sett    int // settlement delivered in the current attempt, -1 if none
	at      time.Duration
	faults  []Fault // the current attempt's faults
	effects int     // env calls made in the current attempt
	crashed bool    // an injected crash fired in the current attempt
	// park, while the node's goroutine runs in an interleaved concurrent
	// group, hands the baton back to the scheduler and waits for it: every
	// env call is a scheduling point.
	park func()
}

var _ Env = (*env)(nil)

func (e *env) begin(attempt, sett int, at time.Duration, faults []Fault) {
	e.attempt, e.sett, e.at, e.faults, e.effects, e.crashed = attempt, sett, at, faults, 0, false
}

func (e *env) end() { e.attempt, e.sett, e.faults = -1, -1, nil }

// point numbers the next effect and returns the fault injected there.
func (e *env) point() (FaultKind, bool) {
	if e.park != nil {
		e.park()
	}
	e.r.progress.Add(1)
	if e.r.overrun.Load() {
		panic(budgetSignal{})
	}
	if e.crashed {
		// A dead node's code is still unwinding (or swallowed the crash
		// panic): it must not touch the world again.
		panic(crashSignal{})
	}
	k := e.effects
	e.effects++
	for _, f := range e.faults {
		if f.Effect == k {
			return f.Kind, true
		}
	}
	return 0, false
}

func (e *env) event(kind EventKind, op string) Event {
	return Event{At: e.at, Kind: kind, Node: e.node, Attempt: e.attempt, Settlement: e.sett, Op: op}
}

func (e *env) crash(op string, k FaultKind) {
	ev := e.event(EvCrash, op)
	ev.Fault = k
	e.r.record(ev)
	e.crashed = true
	panic(crashSignal{})
}

func (e *env) inject(op string, k FaultKind, base error) error {
	err := fmt.Errorf("%s: %w", op, base)
	ev := e.event(EvFault, op)
	ev.Fault, ev.Err = k, err.Error()
	e.r.record(ev)
	return err
}

// Durable implements Env.
func (e *env) Durable(op string, fn func() error) error {
	k, has := e.point()
	if has {
		switch k {
		case CrashBefore:
			e.crash(op, k)
		case FailBefore:
			return e.inject(op, k, ErrInjected)
		}
	}
	err := fn()
	ev := e.event(EvEffect, op)
	if err != nil {
		ev.Err = err.Error()
	}
	e.r.record(ev)
	if has {
		switch k {
		case CrashAfter:
			e.crash(op, k)
		case TimeoutAfter:
			return e.inject(op, k, ErrTimeout)
		}
	}
	return err
}

// Credit implements Env: the ledger applies a keyed credit once per grant.
func (e *env) Credit(grant string, s Settlement, room uint32) (bool, error) {
	k, has := e.point()
	if has {
		switch k {
		case CrashBefore:
			e.crash(OpCredit, k)
		case FailBefore:
			return false, e.inject(OpCredit, k, ErrInjected)
		}
	}
	r := e.r
	r.mu.Lock()
	applied := true
	if grant != "" {
		if _, dup := r.ledger[grant]; dup {
			applied = false
		} else {
			r.ledger[grant] = struct{}{}
		}
	}
	ev := e.event(EvCredit, OpCredit)
	ev.Settlement, ev.Room, ev.Amount, ev.Grant, ev.Applied = r.identify(s), room, s.Net, grant, applied
	if ev.Settlement < 0 {
		ev.Err = fmt.Sprintf("no settlement of player %d, match %d, kind %s", s.Player, s.Match, s.Kind)
	}
	r.recordLocked(ev)
	r.mu.Unlock()
	if has {
		switch k {
		case CrashAfter:
			e.crash(OpCredit, k)
		case TimeoutAfter:
			return false, e.inject(OpCredit, k, ErrTimeout)
		}
	}
	return applied, nil
}
