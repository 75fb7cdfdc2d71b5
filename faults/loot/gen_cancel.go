package lootfaults

import (
	"slices"

	"github.com/onceproof/onceproof/engine"
)

// cancelFault: in crash, store-error and timeout-after-success, half the
// schedules (1 of 0..1, away from 0 where rapid shrinks to) aim one fault
// of the family's kinds at a cancel racing a settle, so that a cancel cut
// between its writes meets the settle. Of a session drawn, the fault lands
// on its cancel's first delivery (faultedCancel's, where it drew one) or,
// the two times in three it drew none, on a cancel added now at the
// instant of the session's first settle trigger, on a node drawn, and
// planned just before it: the cancel runs first, the settle after it
// (before the cancel's retry, RetryAfter later), and a settle that meets a
// half-done cancel must neither deliver nor leave the session open for
// ever. The fault is at the cancel's effect 0 or 1 (effectsOf: before,
// after or instead of its first write, or at its second), of a kind drawn
// from the family's.
//
// Why it exists: addFaults lands on a cancel in 1 draw of 7 (faultOn) and
// only where faultedCancel drew one (a third of the sessions), so a cancel
// cut between two writes (a crash after the first, a second that fails, a
// first that timed out) came up in 0 or 1 of 100 schedules. Here, of a
// design that cancels in two writes and, finding the first, refuses every
// settle and every later cancel (props/loot's escape test), a schedule
// shows the harm when the step fires (1/2), the fault falls between the two
// writes (1/2 of the effect and kind draws: CrashAfter at 0 or CrashBefore
// at 1; FailBefore at 1; TimeoutAfter at 0), and the cancel precedes the
// settle: always for the cancel added here (2/3 of the sessions), half the
// time for faultedCancel's (a second before the deadline, not at it, where
// it is planned after the trigger). So 1/2 x 1/2 x (2/3 + 1/3 x 1/2) = 5/24
// of the schedules, about 21 of 100 for each of the three families, before
// rapid's bias and the few schedules whose earlier faults leave the
// session unstarted. Change the draws and redo the sum (and the escape
// test's bound).
//
// It is the last step of genSteps, so every draw before it is what it was
// and the schedules it does not fire in are unchanged; the fault it adds
// goes into canonical order with the others (canonicalFaults), and where
// the schedule had no fault before it keeps the fast sender (sender drew
// nothing).
func (g *gen) cancelFault() {
	if g.draw(0, 1, "cancel-fault") != 1 {
		return
	}
	x := g.draw(0, len(g.s.Sessions)-1, "cancel-fault-session")
	var kinds []engine.FaultKind
	if g.p.crash {
		kinds = append(kinds, engine.CrashBefore, engine.CrashAfter)
	}
	if g.p.storeError {
		kinds = append(kinds, engine.FailBefore)
	}
	if g.p.timeout {
		kinds = append(kinds, engine.TimeoutAfter)
	}
	cancel := slices.IndexFunc(g.s.Requests, func(r Request) bool { return r.Kind == Kinds.CancelSession && r.Session == x })
	var a int
	if cancel >= 0 {
		a = slices.IndexFunc(g.s.Deliveries, func(d engine.Delivery) bool { return d.Msg == cancel })
	} else {
		r := Request{ID: len(g.s.Requests), Kind: Kinds.CancelSession, Session: x}
		g.s.Requests = append(g.s.Requests, r)
		trigger := slices.IndexFunc(g.s.Deliveries, func(d engine.Delivery) bool { return d.Msg == g.settles[x] })
		a = g.insertDeliveryAt(trigger, engine.Delivery{At: g.s.Deliveries[trigger].At, Msg: r.ID, Node: g.node()})
	}
	g.faults = append(g.faults, engine.Fault{
		Attempt:    a,
		Effect:     g.draw(0, effectsOf(Kinds.CancelSession), "effect"),
		Kind:       kinds[g.draw(0, len(kinds)-1, "kind")],
		OnDelivery: true,
	})
	g.canonicalFaults()
}
