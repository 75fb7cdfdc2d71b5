package lootfaults

import (
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/engine"
)

// The fault steps: the fault families' faults, each on the attempt that
// carries one planned delivery (engine.Fault.OnDelivery), whatever retries
// come before it; the stalls of late-claim, lock-expiry and
// compensation-race; then the sender and the interleaving, drawn last.

// deliveryOf draws one of the planned deliveries of request req.
func (g *gen) deliveryOf(req int) int {
	var at []int
	for i, d := range g.s.Deliveries {
		if d.Msg == req {
			at = append(at, i)
		}
	}
	return at[g.draw(0, len(at)-1, "attempt-of")]
}

// faultOn is what a fault lands on: a settle (it has the most calls, so
// draws 0 and 1, as before), a claim or the compensation job's tick, and
// every other request kind: an open, a start, a cancel (draws 4..6, added
// after the old ones, so that 0..3 still name what they named).
var faultOn = []Kind{Kinds.SettleNow, Kinds.SettleNow, Kinds.ClaimItem, Kinds.Compensate, Kinds.OpenSession, Kinds.StartClaims, Kinds.CancelSession}

// effectsOf is the highest effect a fault on a request of kind k draws:
// 0..7 cover a settle's calls (the lock, the CAS, the record, a delivery
// and its mark per item, the unlock), a claim's one or two, compensation's
// lease and deliveries; an open, a start or a cancel is one or two writes,
// so 0..1: a fault before, after or instead of the first write, or at the
// second (past the last call of a one-write request: a crash that loses
// the answer); drawing 0..7 there would miss their calls 3 times in 4.
func effectsOf(k Kind) int {
	switch k {
	case Kinds.OpenSession, Kinds.StartClaims, Kinds.CancelSession:
		return 1
	}
	return 7
}

// addFaults draws 1..3 faults of kinds, each at an effect (effectsOf) of a
// delivery of a request of a kind faultOn draws (none if the schedule has
// no such request).
func (g *gen) addFaults(label string, kinds ...engine.FaultKind) {
	for range g.draw(1, 3, label) {
		k := faultOn[g.draw(0, len(faultOn)-1, "fault-on")]
		var reqs []int
		for _, r := range g.s.Requests {
			if r.Kind == k {
				reqs = append(reqs, r.ID)
			}
		}
		if len(reqs) == 0 {
			continue
		}
		g.faults = append(g.faults, engine.Fault{
			Attempt:    g.deliveryOf(reqs[g.draw(0, len(reqs)-1, "fault-request")]),
			Effect:     g.draw(0, effectsOf(k), "effect"),
			Kind:       kinds[g.draw(0, len(kinds)-1, "kind")],
			OnDelivery: true,
		})
	}
}

// crashes: a node crashes before or after an effect, or loses its answer
// (an effect past the last).
func (g *gen) crashes() { g.addFaults("crashes", engine.CrashBefore, engine.CrashAfter) }

// storeErrors: a store, lock or inventory call fails, nothing happened.
func (g *gen) storeErrors() { g.addFaults("failures", engine.FailBefore) }

// timeouts: a call happens but the caller is told it timed out.
func (g *gen) timeouts() { g.addFaults("timeouts", engine.TimeoutAfter) }

// stalledClaim: in late-claim, when nothing interleaves (a stall's
// attempt must be fixed) and half the time, a claim handler stalls for 2
// ticks between its first and second call, a tick before the deadline: a
// claim judged in one call and written in another is written after the
// settle at the deadline.
func (g *gen) stalledClaim() {
	if g.s.Concurrent || g.draw(0, 1, "stalled-claim") != 1 {
		return
	}
	claim := Request{Kind: Kinds.ClaimItem, Session: 0, Player: 1, Intent: Intents.Need}
	for _, r := range g.s.Requests {
		if r.Kind == Kinds.ClaimItem && r.Session == 0 {
			claim = r
			break
		}
	}
	a := g.insertDelivery(engine.Delivery{At: g.s.Sessions[0].Deadline - tick, Msg: claim.ID, Node: 0})
	g.faults = append(g.faults, engine.Fault{Attempt: a, Effect: 1, Kind: engine.Pause, For: 2 * tick, OnDelivery: true})
}

// stalledSettler: the settler of one session stalls, for longer than the
// lock's ttl or every lease (farPause, nearPause): lock-expiry anywhere in
// its settle up to its unlock (effects 0..8: before the CAS, the record, a
// delivery, the unlock's second call), compensation-race after its first
// call (effects 1..7): the record is a settle's call 1 at the earliest (a
// settle that freezes, ranks and records in one transaction delivers from
// call 1; the reference, after its lock and CAS, from call 3), so every
// design is stalled between its record and its deliveries in some runs;
// another node is triggered, or compensation runs, while it sleeps.
func (g *gen) stalledSettler() {
	x := g.draw(0, len(g.settles)-1, "stalled-session")
	a := g.deliveryOf(g.settles[x])
	lo, hi := 0, 8
	if g.p.compensation {
		lo, hi = 1, 7
	}
	pause := []time.Duration{farPause, nearPause}[g.draw(0, 1, "pause")]
	g.faults = append(g.faults, engine.Fault{Attempt: a, Effect: g.draw(lo, hi, "pause-effect"), Kind: engine.Pause, For: pause, OnDelivery: true})
	start := g.s.Deliveries[a].At
	other := (g.s.Deliveries[a].Node + 1) % g.s.Nodes
	if g.p.lockExpiry {
		// A second trigger after the stalled settler's lock expired;
		// half the time it stalls 2s itself right after taking the
		// lock, so the first settler wakes while it holds it (a
		// release that deletes by key alone deletes the second's).
		b := g.insertDelivery(engine.Delivery{At: start + pause - time.Second, Msg: g.settles[x], Node: other})
		if g.draw(0, 1, "second-stalls") == 1 {
			g.faults = append(g.faults, engine.Fault{Attempt: b, Effect: 1, Kind: engine.Pause, For: 2 * time.Second, OnDelivery: true})
		}
	}
	if g.p.compensation {
		comp := slices.IndexFunc(g.s.Requests, func(r Request) bool { return r.Kind == Kinds.Compensate })
		g.insertDelivery(engine.Delivery{At: start + pause - time.Second, Msg: comp, Node: other})
	}
}

// recoverCrashes: crash's 0..1 crash inside Recover: of the first 3
// recovery calls, at its effect 0..7.
func (g *gen) recoverCrashes() {
	for range g.draw(0, 1, "recover-crashes") {
		g.faults = append(g.faults, engine.Fault{
			Attempt: engine.Recovery(g.draw(0, 2, "recovery")),
			Effect:  g.draw(0, 7, "effect"),
			Kind:    []engine.FaultKind{engine.CrashBefore, engine.CrashAfter}[g.draw(0, 1, "kind")],
		})
	}
}

// canonicalFaults puts the faults in canonical order; of two faults at one
// point the first drawn wins.
func (g *gen) canonicalFaults() {
	fs := g.faults
	slices.SortStableFunc(fs, engine.CompareFaults)
	fs = slices.CompactFunc(fs, func(a, b engine.Fault) bool { return !a.Before(b) && !b.Before(a) })
	// g.faults keeps the canonical list, so that a step after this one
	// (cancelFault) can add a fault and put them in order again.
	g.faults = fs
	if len(fs) > 0 {
		g.s.Faults = fs
	}
}

// sender: where crash, store-error or timeout drew a fault, the sender is
// fast (0, where rapid shrinks to), slow (a minute: past every lease), or
// giving up after one send, so that only Recover finishes.
func (g *gen) sender() {
	if len(g.s.Faults) == 0 {
		return
	}
	switch g.draw(0, 2, "sender") {
	case 1:
		g.s.RetryAfter = time.Minute
	case 2:
		g.s.MaxAttempts, g.s.GiveUp = 1, true
	}
}

// switches: the interleaving of a Concurrent schedule, up to 48 choices of
// 0..2 (at most 3 goroutines per group), shrinking toward the sequential
// order.
func (g *gen) switches() {
	if !g.s.Concurrent {
		return
	}
	if sw := rapid.SliceOfN(rapid.IntRange(0, 2), 0, 48).Draw(g.t, "switches"); len(sw) > 0 {
		g.s.Switches = sw
	}
}

// insertDelivery inserts d into the schedule after every delivery at or
// before its time, moves the faults drawn on later deliveries along, and
// returns its index.
func (g *gen) insertDelivery(d engine.Delivery) int {
	i, _ := slices.BinarySearchFunc(g.s.Deliveries, d.At, func(e engine.Delivery, at time.Duration) int {
		if e.At <= at {
			return -1
		}
		return 1
	})
	return g.insertDeliveryAt(i, d)
}

// insertDeliveryAt inserts d into the schedule as delivery i (the caller
// keeps the deliveries in time order), moves the faults drawn on later
// deliveries along, and returns i.
func (g *gen) insertDeliveryAt(i int, d engine.Delivery) int {
	g.s.Deliveries = slices.Insert(g.s.Deliveries, i, d)
	for k := range g.faults {
		if g.faults[k].OnDelivery && g.faults[k].Attempt >= i {
			g.faults[k].Attempt++
		}
	}
	return i
}
