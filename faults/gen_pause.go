package faults

import (
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// How long the pause family freezes a call. farPause outlasts every lease
// a design takes on a claim (ref's default of 30 s, which slowRetryGap
// also names) by 5 s, so the late copy, a tick before the call resumes,
// meets a claim whose owner is presumed dead; nearPause is twice
// WindowTTL, past every window but inside a lease of seconds, so the
// late copy meets a claim its owner still holds. Change farPause only
// above the longest lease in impls/ and the tests' designs.
const (
	farPause  = 35 * time.Second
	nearPause = 2 * WindowTTL
)

// pauses: the pause family's stall, drawn last so that no other family's
// draws move. One planned delivery's call (any, rapid shrinks toward the
// first) freezes just before its env call 0..3 (as crashes: a
// three-effect design's claim, credit and commit, a four-effect design's
// every call) for farPause or nearPause, on a fault that names the
// delivery (engine.Fault.OnDelivery), so that it stays on that call
// whatever the retries before it. While it is frozen:
//
//   - the sender hears nothing and retries RetryAfter later on the next
//     node, round robin (2..3 nodes), every RetryAfter until its
//     MaxAttempts sends, as for a lost answer; a send that reaches the
//     frozen node goes unanswered too (Run);
//   - a late copy of the settlement (a queue's redelivery, another
//     gateway's retry) arrives on another node a tick before the call
//     resumes, past the window and, for farPause, past every lease;
//   - half the time (1, away from 0 where rapid shrinks to) that copy's
//     node crashes before its first env call, so a rebuilt node runs
//     Recover while the call is still frozen.
//
// Then the call resumes and finishes on what it read before it froze:
// whatever the others settled, took over or recovered meanwhile, it must
// find out through the durable state, not its memory.
func (g *gen) pauses() {
	if len(g.s.Deliveries) == 0 {
		return
	}
	d := g.draw(0, len(g.s.Deliveries)-1, "paused")
	paused := g.s.Deliveries[d]
	stall := []time.Duration{farPause, nearPause}[g.draw(0, 1, "pause")]
	fs := []engine.Fault{{Attempt: d, Effect: g.draw(0, 3, "pause-effect"), Kind: engine.Pause, For: stall, OnDelivery: true}}
	other := (paused.Node + g.draw(1, g.s.Nodes-1, "late-copy-node")) % g.s.Nodes
	c := g.insertDelivery(engine.Delivery{At: paused.At + stall - tick, Msg: paused.Msg, Node: other}, fs)
	if g.draw(0, 1, "recover-in-pause") == 1 {
		fs = append(fs, engine.Fault{Attempt: c, Effect: 0, Kind: engine.CrashBefore, OnDelivery: true})
	}
	all := append(slices.Clone(g.s.Faults), fs...)
	slices.SortStableFunc(all, engine.CompareFaults)
	g.s.Faults = all
}

// insertDelivery inserts d into the schedule's deliveries after every one
// at or before its time (they stay in time order), moves the faults of fs
// that name a later delivery along, and returns d's index.
func (g *gen) insertDelivery(d engine.Delivery, fs []engine.Fault) int {
	i, _ := slices.BinarySearchFunc(g.s.Deliveries, d.At, func(e engine.Delivery, at time.Duration) int {
		if e.At <= at {
			return -1
		}
		return 1
	})
	g.s.Deliveries = slices.Insert(g.s.Deliveries, i, d)
	for k := range fs {
		if fs[k].OnDelivery && fs[k].Attempt >= i {
			fs[k].Attempt++
		}
	}
	return i
}
