package faults

import (
	"cmp"
	"slices"

	"github.com/onceproof/onceproof/engine"
)

// inNodeBursts is in-node's one step, drawn last so that no draw of any
// other family moves: it makes the schedule Concurrent (same-instant sends
// run at once; RunOptions.InNode gives each its own goroutine on its one
// node) and adds, at one instant on the settlement's node:
//   - 1..2 identical copies beside every first arrival: 2..3 calls racing
//     on one settlement, the least that can race and one more, so a
//     design whose dedup lets exactly two through is still caught;
//   - for every final, in half the matches (draw 1, away from 0 where
//     rapid shrinks to), a copy of the match's instant beside the final's
//     first arrival: two distinct settlements of one player at once,
//     whose per-player state (a sequence, a window of signatures) the
//     two calls read and write together.
//
// Nothing moves: every first arrival keeps its time, so the world rules
// and the order of a player's settlements are the base family's.
func (g *gen) inNodeBursts() {
	g.s.Concurrent = true
	first := len(g.s.Deliveries)
	// instantOf: per (player, match), the instant's ID.
	type pm struct{ player, match int }
	instantOf := map[pm]int{}
	for i := range g.all {
		if a := &g.all[i]; a.st.Kind == KindInstant {
			instantOf[pm{a.player, a.match}] = a.st.ID
		}
	}
	seen := make([]bool, len(g.all))
	for _, d := range g.s.Deliveries[:first] {
		a := &g.all[d.Msg]
		if seen[d.Msg] {
			continue // a copy the base family added, not the first arrival
		}
		seen[d.Msg] = true
		for range g.draw(1, 2, "in-node-copies") {
			g.s.Deliveries = append(g.s.Deliveries, d)
		}
		if a.st.Kind != KindFinal {
			continue
		}
		if id, ok := instantOf[pm{a.player, a.match}]; ok && g.draw(0, 1, "in-node-sibling") == 1 {
			g.s.Deliveries = append(g.s.Deliveries, engine.Delivery{At: d.At, Msg: id, Node: d.Node})
		}
	}
	slices.SortStableFunc(g.s.Deliveries, func(a, b engine.Delivery) int { return cmp.Compare(a.At, b.At) })
}
