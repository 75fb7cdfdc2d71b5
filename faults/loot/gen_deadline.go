package lootfaults

import (
	"slices"
	"time"
)

// lateClaimer: in clock-skew and lock-expiry (not joined with late-claim,
// whose member 1 already claims around the deadline instant, in the second
// this claim would share: only ties puts two claims in one second), the
// highest-numbered member
// who has not claimed (none, when every member did: a member who claimed
// and claims again changes its intent, which is RuleOrder's question of
// claim time, not this step's) claims NEED just after the deadline by the
// database's clock, at it or
// 1ms, a tick or 5 ticks later (0, where rapid shrinks to: the deadline
// instant, which source 004 gives to the settle), on the node whose clock
// is furthest behind (the lowest-numbered of equals), planned just before
// the session's first settle trigger at or after its time. Every offset
// is under the smallest skew behind (1s, skews), so that node's clock
// still reads before the deadline: a design that judges the deadline by
// the node's clock, or not at all, takes the claim, and a settle that
// comes later (a node behind triggers late; a settler stalls past the lock
// before its freeze) freezes it in. A design judging by the database's
// clock refuses it, which the rules allow (HonestAnswer judges refusals
// before the deadline only).
func (g *gen) lateClaimer() {
	x := g.session()
	at := x.Deadline + []time.Duration{0, time.Millisecond, tick, 5 * tick}[g.draw(0, 3, "late-claimer-by")]
	nd := 0
	for n := range g.s.Nodes {
		if g.s.Skew(n) < g.s.Skew(nd) {
			nd = n
		}
	}
	var late PlayerID // 0: every member claimed
	for _, p := range g.s.Team {
		if !slices.ContainsFunc(g.s.Requests, func(r Request) bool { return r.Kind == Kinds.ClaimItem && r.Session == x.ID && r.Player == p }) {
			late = p
		}
	}
	if late == 0 {
		return
	}
	r := Request{Kind: Kinds.ClaimItem, Session: x.ID, Player: late, Intent: Intents.Need}
	r.ID = len(g.s.Requests)
	g.s.Requests = append(g.s.Requests, r)
	settle := g.settles[len(g.settles)-1]
	i := slices.IndexFunc(g.plan, func(d planned) bool { return d.req == settle && d.at >= at })
	if i < 0 {
		i = len(g.plan)
	}
	g.plan = slices.Insert(g.plan, i, planned{at, r.ID, nd})
}
