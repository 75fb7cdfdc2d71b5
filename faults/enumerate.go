package faults

import (
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// scope bounds an exhaustive enumeration of schedules (enumerate). Every
// schedule within it is a world checkWorld accepts.
type scope struct {
	// Settlements: 1 or 2: one alone, of either kind, as a credit or a
	// debit; or two with equal nets (the collision designs that recognise
	// settlements by content must meet): one match's instant and final; a
	// player's two matches in the same or another room, every pair of
	// kinds; two players in one shared match (of one kind or two) or in two
	// matches (in one room or two).
	Settlements int
	// Deliveries bounds the planned deliveries (every settlement sent at
	// least once), each after the previous by 0 (at once), one tick, or
	// WindowTTL and a tick (past every window).
	Deliveries int
	// Nodes bounds the cluster: 1, or 2 (deliveries on either, the first on
	// node 0; retries go round robin).
	Nodes int
	// FaultDeliveries bounds the planned deliveries of a schedule with a
	// fault: one fault, at effect 0..Effects-1 of attempt
	// 0..FaultAttempts-1 (crash before or after, fail, timeout), or inside
	// Recover call 0..RecoverCalls-1 (crash before or after), each with the
	// fast, the slow and the giving-up sender.
	FaultDeliveries, Effects, FaultAttempts, RecoverCalls int
}

// defaultScope is what the matrix enumerates. Its size: 17 settlement
// worlds; 278 planned-delivery patterns of up to 2 deliveries, each with no
// fault or one of 40 (attempts 0..1 and Recover call 0, effects 0..3) times
// 3 senders; 3,600 patterns of 3 deliveries without a fault; about 37,000
// schedules, plus every interleaving of the concurrent ones of up to 2
// deliveries (props enumerates those per design: tens each). A run costs
// tens of microseconds, so a design's column costs about a second; each
// knob multiplies it (another fault attempt: x1.2, a third sender: x1.5,
// a fourth delivery with faults: x20).
var defaultScope = scope{Settlements: 2, Deliveries: 3, Nodes: 2, FaultDeliveries: 2, Effects: 4, FaultAttempts: 2, RecoverCalls: 1}

func (sc scope) String() string {
	return fmt.Sprintf("<= %d settlements, <= %d deliveries (<= %d with a fault), <= %d nodes, <= 1 fault (attempts 0..%d or Recover calls 0..%d, effects 0..%d, each with a fast, slow or giving-up sender), every interleaving of a same-instant group",
		sc.Settlements, sc.Deliveries, sc.FaultDeliveries, sc.Nodes, sc.FaultAttempts-1, sc.RecoverCalls-1, sc.Effects-1)
}

// enumGaps are the delays between consecutive planned deliveries.
var enumGaps = []time.Duration{0, tick, WindowTTL + tick}

// enumerate yields every schedule within sc, in a fixed order. A schedule
// with a same-instant group on two nodes comes twice: run one after the
// other, and as a Concurrent group (no fault), with Switches nil; every
// interleaving of the group is a choice of Switches, which the caller
// enumerates against a design (RunOptions.Choices reports the arities).
func enumerate(sc scope) iter.Seq[Schedule] {
	return func(yield func(Schedule) bool) {
		for _, sts := range enumSettlements(sc.Settlements) {
			for d := 1; d <= sc.Deliveries; d++ {
				for _, seq := range coverings(len(sts), d) {
					for _, gaps := range product(len(enumGaps), d-1) {
						for nodes := 1; nodes <= sc.Nodes; nodes++ {
							for _, on := range product(nodes, d-1) {
								base := Schedule{Frame: engine.Frame{Family: Families.SmallScope, Nodes: nodes, RetryAfter: genRetryAfter, MaxAttempts: genMaxAttempts}, Settlements: sts}
								at := time.Duration(0)
								for i, id := range seq {
									if i > 0 {
										at += enumGaps[gaps[i-1]]
									}
									node := 0
									if i > 0 {
										node = on[i-1]
									}
									base.Deliveries = append(base.Deliveries, engine.Delivery{At: at, Msg: id, Node: node})
								}
								if !yield(base) {
									return
								}
								if d <= sc.FaultDeliveries && groupOnTwoNodes(base) {
									c := base
									c.Concurrent = true
									if !yield(c) {
										return
									}
								}
								if d > sc.FaultDeliveries {
									continue
								}
								for _, f := range enumFaults(sc) {
									for sender := range 3 {
										c := base
										c.Faults = []engine.Fault{f}
										switch sender {
										case 1:
											c.RetryAfter = genSlowRetryAfter
										case 2:
											c.MaxAttempts, c.GiveUp = 1, true
										}
										if !yield(c) {
											return
										}
									}
								}
							}
						}
					}
				}
			}
		}
	}
}

// smallScope is enumerate(defaultScope), computed once.
var smallScope = sync.OnceValue(func() []Schedule { return slices.Collect(enumerate(defaultScope)) })

// groupOnTwoNodes reports whether two consecutive deliveries of s come at
// one instant on two nodes (a race the concurrent mode can interleave).
func groupOnTwoNodes(s Schedule) bool {
	for i := 1; i < len(s.Deliveries); i++ {
		a, b := s.Deliveries[i-1], s.Deliveries[i]
		if a.At == b.At && a.Node != b.Node {
			return true
		}
	}
	return false
}

// enumFaults is every single fault of sc, in Schedule.Faults order.
func enumFaults(sc scope) []engine.Fault {
	var out []engine.Fault
	for r := sc.RecoverCalls - 1; r >= 0; r-- {
		for e := range sc.Effects {
			for _, k := range []engine.FaultKind{engine.CrashBefore, engine.CrashAfter} {
				out = append(out, engine.Fault{Attempt: engine.Recovery(r), Effect: e, Kind: k})
			}
		}
	}
	for a := range sc.FaultAttempts {
		for e := range sc.Effects {
			for _, k := range []engine.FaultKind{engine.CrashBefore, engine.CrashAfter, engine.FailBefore, engine.TimeoutAfter} {
				out = append(out, engine.Fault{Attempt: a, Effect: e, Kind: k})
			}
		}
	}
	return out
}

// enumSettlements is every world of up to n (1 or 2) settlements, built in
// production order and renumbered (rounds, seq) as the world rules want.
func enumSettlements(n int) [][]Settlement {
	type spec struct {
		player uint32
		room   uint32
		match  uint64
		kind   Kind
		net    int64
	}
	build := func(ss ...spec) []Settlement {
		var out []Settlement
		for i, s := range ss {
			out = append(out, Settlement{ID: i, Player: s.player, Room: s.room, Match: s.match, Kind: s.kind, Net: s.net, Final: s.kind == KindFinal})
		}
		return renumber(Schedule{Frame: engine.Frame{Family: Families.SmallScope}, Settlements: out}).Settlements
	}
	kinds := []Kind{KindInstant, KindFinal}
	var out [][]Settlement
	for _, k := range kinds {
		for _, net := range []int64{10, -10} {
			out = append(out, build(spec{1, 1, 1, k, net}))
		}
	}
	if n < 2 {
		return out
	}
	// One match: its instant, then its final.
	out = append(out, build(spec{1, 1, 1, KindInstant, 10}, spec{1, 1, 1, KindFinal, 10}))
	// A player's next match, in the same room or another, every pair of
	// kinds: where content-based designs meet their collisions.
	for _, ka := range kinds {
		for _, kb := range kinds {
			for _, room := range []uint32{1, 2} {
				out = append(out, build(spec{1, 1, 1, ka, 10}, spec{1, room, 2, kb, 10}))
			}
		}
	}
	// Two players: in one shared match, of one kind or two (a key without
	// the player collides), or in two matches, in one room or two.
	out = append(out,
		build(spec{1, 1, 1, KindInstant, 10}, spec{2, 1, 1, KindInstant, 10}),
		build(spec{1, 1, 1, KindInstant, 10}, spec{2, 1, 1, KindFinal, 10}),
		build(spec{1, 1, 1, KindInstant, 10}, spec{2, 1, 2, KindInstant, 10}),
		build(spec{1, 1, 1, KindFinal, 10}, spec{2, 2, 2, KindFinal, 10}),
	)
	return out
}

// coverings is every sequence of length d over 0..n-1 that names each of
// them at least once (every settlement is sent).
func coverings(n, d int) [][]int {
	var out [][]int
	for _, seq := range product(n, d) {
		seen := make([]bool, n)
		for _, v := range seq {
			seen[v] = true
		}
		all := true
		for _, ok := range seen {
			all = all && ok
		}
		if all {
			out = append(out, seq)
		}
	}
	return out
}

// product is every sequence of length d over 0..n-1, in lexicographic order
// (one empty sequence for d = 0).
func product(n, d int) [][]int {
	out := [][]int{{}}
	for range d {
		var next [][]int
		for _, p := range out {
			for v := range n {
				next = append(next, append(append([]int(nil), p...), v))
			}
		}
		out = next
	}
	return out
}
