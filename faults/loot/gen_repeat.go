package lootfaults

import (
	"slices"
	"time"
)

// The repeat steps: every request kind of a session, not only claims, is
// sometimes delivered again, and the fault families' sessions are
// sometimes canceled, so that a crash, a failure or a timeout can land on
// a cancel (faultOn). A design whose open, start, settle, cancel or
// compensation tick is not idempotent under a retry, a resend to another
// node or a copy at the same instant shows it here.

// repeatable reports whether the preset repeats whole requests: in
// duplicate-claim (its point: every request arrives again, not only
// claims), and in the families whose faults already make the sender retry
// (crash, store-error, timeout-after-success), where a copy of a request
// whose first send a fault cut short is what a gateway resends.
func (p preset) repeatable() bool { return p.duplicate || p.crash || p.storeError || p.timeout }

// repeatGaps are how long after its first arrival a request arrives again,
// and whether on the other node: a double click (1ms), the sender's retry
// (RetryAfter), a gateway resend to another node a second later, and one
// after a gateway's own 5s timeout. 5s matters for opens and starts: it
// lands after the members' claims (seconds 1..4 of the session, claims), so
// an open or a start that resets the session's claims on a repeat loses
// claims already answered accepted (FrozenClaims), and an open that puts a
// CLAIMING session back to OPEN goes backwards (ForwardOnly).
var repeatGaps = []struct {
	gap   time.Duration
	other bool
}{{time.Millisecond, false}, {retryAfter, false}, {time.Second, true}, {5 * time.Second, true}}

// repeats: each open, start, settle, cancel and compensation tick of the
// session just drawn arrives again half the time (0, where rapid shrinks
// to, is not), at a gap of repeatGaps; where the schedule interleaves
// (duplicate-claim's burst) also at the same instant on the other node, as
// two goroutines would handle a copy. Claims have their own
// (duplicateClaim).
func (g *gen) repeats() {
	x := g.session().ID
	interleaving := g.burst
	// The session's requests are the last ones added (sessions draws one
	// after another), its compensation tick among them.
	first := slices.IndexFunc(g.s.Requests, func(r Request) bool { return r.Session == x })
	for _, r := range g.s.Requests[first:] {
		if r.Kind == Kinds.ClaimItem || g.draw(0, 1, "repeated") != 1 {
			continue
		}
		first := -1
		for i, d := range g.plan {
			if d.req == r.ID {
				first = i
				break
			}
		}
		if first < 0 {
			continue // a trigger another step moved away
		}
		n := len(repeatGaps)
		if interleaving {
			n++
		}
		at, nd := g.plan[first].at, g.plan[first].node
		if k := g.draw(0, n-1, "repeat-gap"); k < len(repeatGaps) {
			at += repeatGaps[k].gap
			if repeatGaps[k].other {
				nd = (nd + 1) % g.s.Nodes
			}
		} else {
			nd = (nd + 1) % g.s.Nodes
		}
		g.plan = append(g.plan, planned{at, r.ID, nd})
	}
}

// faultedCancel: in the fault families (which have no cancel of their own)
// a third of the sessions are canceled (2 of 0..2, away from 0 where rapid
// shrinks to), a second before their deadline or at it (the settle's
// instant, planned after the trigger: the settle runs first and the cancel
// meets what a fault left of it), so that a fault can land between a
// cancel's writes and a cancel's retry meets what its first send left. A
// third, not every session: a session canceled before its settle has no
// settle left to fault.
func (g *gen) faultedCancel() {
	if g.draw(0, 2, "faulted-cancel") != 2 {
		return
	}
	by := []time.Duration{-time.Second, 0}[g.draw(0, 1, "faulted-cancel-by")]
	g.add(Request{Kind: Kinds.CancelSession, Session: g.session().ID}, g.session().Deadline+by, g.node())
}
