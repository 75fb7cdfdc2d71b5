package faults

import (
	"cmp"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The arrival steps: when and where each settlement arrives, first and
// again. Late and interleave move first arrivals before the IDs are
// given; the copies come after the first arrivals, in genSteps' order.

// lateArrivals: 1..4 times (at least one, so every schedule of the family
// has the feature; rapid shrinks toward one), a settlement of a match that
// has a next one arrives 0..1.5 ticks after the next match started, before
// that match's instant at +2 ticks, and the player moved to another room
// (alwaysMove): "the player is already in the new room when the old room's
// final arrives" (seed 001 §3).
func (g *gen) lateArrivals() {
	eligible := indexes(g.all, func(a pending) bool { return a.hasNext })
	for range g.draw(1, 4, "lates") {
		a := &g.all[eligible[g.draw(0, len(eligible)-1, "late")]]
		a.arrive = a.next + time.Duration(g.draw(0, 3, "late-by"))*tick/2
	}
}

// interleavedFinals: 1..4 times (at least one, as in late), a final of a
// match that has a next one arrives 0.5..2 ticks after the next match's
// instant (+2 ticks), before its final (+4): seed 001 §2, its seq is the
// predecessor of the instant that was already processed.
func (g *gen) interleavedFinals() {
	eligible := indexes(g.all, func(a pending) bool { return a.hasNext && a.st.Kind == KindFinal })
	for range g.draw(1, 4, "interleaves") {
		a := &g.all[eligible[g.draw(0, len(eligible)-1, "interleaved")]]
		a.arrive = a.next + 2*tick + time.Duration(g.draw(1, 4, "interleave-by"))*tick/2
	}
}

// indexes returns the indexes of the elements of all that keep accepts.
func indexes(all []pending, keep func(pending) bool) []int {
	var out []int
	for i, a := range all {
		if keep(a) {
			out = append(out, i)
		}
	}
	return out
}

// firstArrivals delivers every settlement once, at its arrival: in
// multi-node and pause on a random node, in concurrent as 2..Nodes identical copies
// at the same instant on distinct nodes (goroutines race on one
// settlement). Only identical copies: an instant racing its own final is
// an ordering fault, the business of late and interleave, and mixing it in
// would blur the column.
func (g *gen) firstArrivals() {
	for i := range g.all {
		a := &g.all[i]
		if g.p.multiNode || g.p.pause {
			a.node = g.draw(0, g.s.Nodes-1, "node")
		}
		copies := 1
		if g.p.concurrent {
			copies = g.draw(2, g.s.Nodes, "copies")
		}
		for c := range copies {
			g.dels = append(g.dels, engine.Delivery{At: a.arrive, Msg: i, Node: (a.node + c) % g.s.Nodes})
		}
	}
}

// pick draws a settlement to deliver again.
func (g *gen) pick(label string) *pending { return &g.all[g.draw(0, len(g.all)-1, label)] }

// again delivers a's settlement once more, at, on a's node.
func (g *gen) again(a *pending, at time.Duration) {
	g.dels = append(g.dels, engine.Delivery{At: at, Msg: a.st.ID, Node: a.node})
}

// duplicates: 1..6 extra copies, at a gap of 0 (the same instant), 1ms,
// 1 tick or 2 ticks (= RetryAfter) after the first arrival, inside
// RetryAfter and WindowTTL (the window's fast path), or (-1) 1 tick after
// the player's match k+2 starts, for a settlement of match k: the latest a
// copy can come that per-player state of two adjacent matches still
// promises to catch (3 newer settlements of k and k+1 arrived in between),
// still inside WindowTTL (2 matches - 1 tick after the earliest arrival, 2
// ticks into match k).
func (g *gen) duplicates() {
	gaps := []time.Duration{0, time.Millisecond, tick, 2 * tick, -1}
	for range g.draw(1, 6, "duplicates") {
		a := g.pick("dup-of")
		at := a.arrive + gaps[g.draw(0, len(gaps)-1, "dup-gap")]
		if at < a.arrive {
			at = a.next + MatchEvery + tick
		}
		g.again(a, at)
	}
}

// otherNodeCopies: multi-node's 1..4 close copies (0..2 ticks after the
// first arrival, inside RetryAfter) on another node than the first.
func (g *gen) otherNodeCopies() {
	for range g.draw(1, 4, "other-node-copies") {
		a := g.pick("copy-of")
		gap := time.Duration(g.draw(0, 2, "copy-gap")) * tick
		other := (a.node + g.draw(1, g.s.Nodes-1, "copy-node")) % g.s.Nodes
		g.dels = append(g.dels, engine.Delivery{At: a.arrive + gap, Msg: a.st.ID, Node: other})
	}
}

// deepReplays: 1..2 batches, a queue replays 1..6 consecutive
// settlements, in their order, 3..6 matches after they first arrived; 3
// matches > WindowTTL (2.5 matches), so only durable state can catch them.
func (g *gen) deepReplays() {
	n := len(g.all)
	for range g.draw(1, 2, "replays") {
		lo := g.draw(0, n-1, "replay-from")
		count := g.draw(1, 6, "replay-count")
		shift := time.Duration(g.draw(3, 6, "replay-matches")) * MatchEvery
		for i := lo; i < n && i < lo+count; i++ {
			g.again(&g.all[i], g.all[i].arrive+shift)
		}
	}
}

// farReplays: long-history's 5..20 replays of single settlements 3..1000
// matches after their first arrival (within the schedule's span or past
// it: a queue can hold a message for days). A design whose memory grows
// with history instead of rate x ttl shows (BoundedState), and so does a
// store that forgets records older than some count (NoDup on the far
// replays).
func (g *gen) farReplays() {
	for range g.draw(5, 20, "far-replays") {
		a := g.pick("far-replay-of")
		shift := time.Duration(g.draw(3, 1000, "far-replay-matches")) * MatchEvery
		g.again(a, a.arrive+shift)
	}
}

// expiryCopies: 1..4 copies at exactly WindowTTL, WindowTTL+1ns or
// WindowTTL+1 tick after the first arrival: the window forgot (an entry
// put at t is gone at t+ttl), the store must catch it.
func (g *gen) expiryCopies() {
	eps := []time.Duration{0, time.Nanosecond, tick}
	for range g.draw(1, 4, "expiry-copies") {
		a := g.pick("expiry-of")
		e := eps[g.draw(0, len(eps)-1, "expiry-eps")]
		g.again(a, a.arrive+WindowTTL+e)
	}
}

// sortDeliveries puts the deliveries in time order, stable: equal times
// keep generation order (first arrivals first).
func (g *gen) sortDeliveries() {
	slices.SortStableFunc(g.dels, func(a, b engine.Delivery) int { return cmp.Compare(a.At, b.At) })
	g.s.Deliveries = g.dels
}
