package engine

import (
	"iter"
	"slices"
	"time"
)

// A frame with a Pause runs each attempt as a coroutine (iter.Pull): at a
// Pause the attempt yields back to the sender's loop, which goes on with
// the deliveries, retries and other resumptions due before the pause ends,
// then resumes it. Only one coroutine runs at a time, so a run stays
// sequential and deterministic; coroutines cost a few hundred nanoseconds
// each, which is why frames without a Pause do not use them.

// paused is an attempt stalled by a Pause.
type paused struct {
	it     item
	at     time.Duration // when it resumes
	gen    int           // its node's generation when it paused
	c      *call
	next   func() (struct{}, bool)
	stop   func()
	acked  bool          // the attempt's result, once it returned
	doneAt time.Duration // when its answer came
	waited bool          // the sender has already given up waiting once
}

// startPausable runs attempt it as a coroutine until it pauses or ends.
func (r *runner[X]) startPausable(it item) {
	p := &paused{it: it}
	p.next, p.stop = iter.Pull(func(yield func(struct{}) bool) {
		p.acked, p.doneAt = r.attempt(it, func() bool { return yield(struct{}{}) })
	})
	r.step(p)
}

// step runs p until it pauses again (it is queued to resume) or ends (the
// sender gets its answer).
func (r *runner[X]) step(p *paused) {
	if _, stalled := p.next(); stalled {
		port := r.ports[p.it.node]
		p.c, p.at, p.gen = port.cur, port.cur.at, r.gen[p.it.node]
		port.end()
		i, _ := slices.BinarySearchFunc(r.resumes, p.at, func(q *paused, at time.Duration) int {
			if q.at <= at {
				return -1 // equal times resume in the order they paused
			}
			return 1
		})
		r.resumes = slices.Insert(r.resumes, i, p)
		if !p.waited {
			// The sender hears nothing: it times out and retries as for a
			// lost answer, RetryAfter after its send.
			p.waited = true
			r.answer(p.it, false, p.it.at)
		}
		return
	}
	p.stop()
	r.answer(p.it, p.acked, p.doneAt)
}

// resumeDue resumes the first paused call if it is due before the next
// send (sends at the same instant go first) and reports whether it did.
func (r *runner[X]) resumeDue(pi int) bool {
	if len(r.resumes) == 0 {
		return false
	}
	p := r.resumes[0]
	if at, ok := r.peekAt(pi); ok && at <= p.at {
		return false
	}
	r.resumes = r.resumes[1:]
	r.lastAt = p.at
	r.sleepTo(p.at)
	if r.gen[p.it.node] != p.gen {
		p.c.killed = true
	}
	r.ports[p.it.node].cur = p.c
	r.step(p)
	return true
}

// stopPaused ends every paused call when the budget ran out: each unwinds
// from its pause without touching the world again.
func (r *runner[X]) stopPaused() {
	for _, p := range r.resumes {
		r.ports[p.it.node].cur = p.c
		p.stop()
	}
	r.resumes = nil
}
