package lootfaults

import (
	"cmp"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The world and session steps: the cluster and the team, then each
// session's requests and when they arrive. Their draws come before the
// faults' (genSteps).

// nodes draws concurrent-settle's cluster: 2 nodes let a trigger and a
// retry land on another node (every family has them); 3 when several
// nodes trigger at once.
func (g *gen) nodes() { g.s.Nodes = g.draw(2, 3, "nodes") }

// team draws the team snapshot, 3..4 members, and each member's fairness
// record: 0..2 wins, 0 where rapid shrinks to; all 0 for ties and
// intent-change, so claims of one intent compare by time alone.
func (g *gen) team() {
	members := g.draw(3, 4, "members")
	for m := 1; m <= members; m++ {
		g.s.Team = append(g.s.Team, PlayerID(m))
		if w := g.draw(0, 2, "wins"); w > 0 && !g.p.ties && !g.p.intentChange {
			g.s.Fairness = append(g.s.Fairness, Fair{PlayerID(m), int64(w)})
		}
	}
}

// skews: clock-skew's node clock offsets of -3..3 s (maxSkew), at least
// one node off: a node's scheduler triggers by its own clock, and claims
// near the deadline meet a node that judges the deadline by its clock.
func (g *gen) skews() {
	offs := []time.Duration{0, -time.Second, time.Second, -maxSkew, maxSkew}
	g.s.Skews = make([]time.Duration, g.s.Nodes)
	for n := range g.s.Skews {
		g.s.Skews[n] = offs[g.draw(0, len(offs)-1, "skew")]
	}
	if !slices.ContainsFunc(g.s.Skews, func(d time.Duration) bool { return d != 0 }) {
		g.s.Skews[g.draw(0, g.s.Nodes-1, "skewed-node")] = offs[1+g.draw(0, len(offs)-2, "skew")]
	}
}

// drawBurst draws whether duplicate-claim, with no faults (a concurrent
// group has none), sends the burst of burstClaims: when 0..2 draws 2, away
// from 0 where rapid shrinks to, so a shrunk counterexample keeps the
// burst only if its bug needs it.
func (g *gen) drawBurst() { g.burst = g.draw(0, 2, "burst") == 2 }

// sessions draws 1..2 sessions (two let one session's requests meet the
// next one's around a deadline) and runs sessionSteps for each: session x
// opens at x sessionEvery and is settled at its deadline, a claim window
// later.
func (g *gen) sessions() {
	for x := range g.draw(g.minSessions(), 2, "sessions") {
		open := time.Duration(x) * sessionEvery
		g.s.Sessions = append(g.s.Sessions, Session{ID: x, Quantity: 1, Deadline: open + claimWindow})
		g.run(sessionSteps)
	}
}

// sessionSteps are the steps of one session, the last of g.s.Sessions, in
// the order they draw.
var sessionSteps = []genStep{
	{func(p preset) bool { return p.quantity }, (*gen).quantity},
	{nil, (*gen).openAndStart},
	{nil, (*gen).claims},
	{func(p preset) bool { return p.outsider }, (*gen).outsiders},
	{nil, (*gen).settleTrigger},
	{func(p preset) bool { return p.skew }, (*gen).skewedTriggers},
	{func(p preset) bool { return p.concurrentSettle }, (*gen).concurrentTriggers},
	{func(p preset) bool { return p.early }, (*gen).earlyTriggers},
	{func(p preset) bool { return p.cancel }, (*gen).cancel},
	{func(p preset) bool { return p.crash || p.storeError || p.timeout || p.compensation }, (*gen).compensationTick},
	{func(p preset) bool { return p.sharedLoot }, (*gen).sharedLoot},
	{func(p preset) bool { return p.teamChange }, (*gen).teamChange},
	{func(p preset) bool { return p.fairChange }, (*gen).fairChange},
	{func(p preset) bool { return p.intentChange }, (*gen).intentChanges},
	{func(p preset) bool { return (p.skew || p.lockExpiry) && !p.late }, (*gen).lateClaimer},
	{func(p preset) bool { return (p.crash || p.storeError || p.timeout) && !p.cancel }, (*gen).faultedCancel},
	{func(p preset) bool { return p.repeatable() }, (*gen).repeats},
}

// session is the session the session steps are drawing.
func (g *gen) session() *Session { return &g.s.Sessions[len(g.s.Sessions)-1] }

// open is when the session opens.
func (g *gen) open() time.Duration { return g.session().Deadline - claimWindow }

// quantity: 2..3 items drop, sometimes more than there are claimants.
func (g *gen) quantity() { g.session().Quantity = g.draw(2, 3, "quantity") }

// openAndStart opens the session and starts its claims half a tick later.
func (g *gen) openAndStart() {
	x := g.session().ID
	g.add(Request{Kind: Kinds.OpenSession, Session: x}, g.open(), g.node())
	g.add(Request{Kind: Kinds.StartClaims, Session: x}, g.open()+tick/2, g.node())
}

// claims: members 1..claimers claim, member m in second m of the session
// (0..0.9s into it): claims that could tie never share a second outside
// ties (ruleSeconds). ties: 2..3 NEED claims in one second, or at one
// instant. late-claim and clock-skew move members 1 and 2's claims to
// around the deadline; duplicate-claim sends some again.
func (g *gen) claims() {
	x, open, deadline := g.session().ID, g.open(), g.session().Deadline
	minClaimers := 1
	if g.p.ties {
		minClaimers = 2 // a tie needs two
	}
	claimers := g.draw(minClaimers, len(g.s.Team), "claimers")
	intents := []Intent{Intents.Need, Intents.Greed, Intents.Pass}
	// A tie starts 0..2 ticks into a whole second, so its later claims
	// (up to 7 ticks on) stay in that second.
	tieAt := open + time.Duration(g.draw(1, 8, "tie-second"))*time.Second + time.Duration(g.draw(0, 2, "tie-in"))*tick
	for m := 1; m <= claimers; m++ {
		in := intents[g.draw(0, 2, "intent")]
		at := open + time.Duration(m)*time.Second + time.Duration(g.draw(0, 9, "claim-at"))*tick
		switch {
		case g.p.ties && m <= 3:
			// The same instant (0, where rapid shrinks to), or the same
			// second, 0.3s or 0.7s later.
			in = Intents.Need
			at = tieAt + []time.Duration{0, 3 * tick, 7 * tick}[g.draw(0, 2, "tie-by")]
		case g.p.late && m == 1:
			// Just before, at, or just after the deadline.
			by := []time.Duration{0, -time.Millisecond, time.Millisecond, -tick, tick, -time.Second / 2}
			at = deadline + by[g.draw(0, len(by)-1, "late-by")]
		case g.p.late && m == 2:
			// A second later: refused by every clock that agrees with
			// the database's.
			at = deadline + time.Second + []time.Duration{0, time.Millisecond, tick}[g.draw(0, 2, "later-by")]
		case g.p.skew && m <= 2:
			// Two NEED claims in the two seconds before the deadline,
			// on two nodes (below): a node that stamps claims with its
			// own clock can rank the later one first.
			in = Intents.Need
			at = deadline - time.Duration(3-m)*time.Second + time.Duration(g.draw(0, 9, "skew-by"))*tick
		}
		nd := g.node()
		if g.p.skew && m <= 2 {
			nd = (m - 1) % g.s.Nodes
		}
		id := g.add(Request{Kind: Kinds.ClaimItem, Session: x, Player: PlayerID(m), Intent: in}, at, nd)
		if g.p.duplicate {
			g.duplicateClaim(id, at)
		}
	}
}

// duplicateClaim: duplicate-claim sends half the claims again: a double
// click (1ms), a client retry (RetryAfter), a gateway resend to another
// node (1s).
func (g *gen) duplicateClaim(id int, at time.Duration) {
	if g.draw(0, 1, "duplicated") != 1 {
		return
	}
	gaps := []time.Duration{time.Millisecond, retryAfter, time.Second}
	gap := gaps[g.draw(0, len(gaps)-1, "dup-gap")]
	nd := g.plan[len(g.plan)-1].node
	if gap == time.Second {
		nd = (nd + 1) % g.s.Nodes
	}
	g.plan = append(g.plan, planned{at + gap, id, nd})
}

// outsiders: 1..2 players outside the team claim, in seconds 5 and 6
// (after every member's), NEED or GREED.
func (g *gen) outsiders() {
	x, open := g.session().ID, g.open()
	for k := range g.draw(1, 2, "outsiders") {
		pl := PlayerID(len(g.s.Team) + 1 + k)
		at := open + time.Duration(5+k)*time.Second + time.Duration(g.draw(0, 9, "outsider-at"))*tick
		g.add(Request{Kind: Kinds.ClaimItem, Session: x, Player: pl, Intent: []Intent{Intents.Need, Intents.Greed}[g.draw(0, 1, "intent")]}, at, g.node())
	}
}

// settleTrigger: the scheduler's trigger at the deadline, on a node.
func (g *gen) settleTrigger() {
	g.settles = append(g.settles, g.add(Request{Kind: Kinds.SettleNow, Session: g.session().ID}, g.session().Deadline, g.node()))
}

// skewedTriggers: with skewed clocks each node's scheduler fires when its
// own clock reads the deadline, instead of the one trigger.
func (g *gen) skewedTriggers() {
	deadline, settle := g.session().Deadline, g.settles[len(g.settles)-1]
	g.plan = g.plan[:len(g.plan)-1]
	for n := range g.s.Nodes {
		g.plan = append(g.plan, planned{deadline - g.s.Skew(n), settle, n})
	}
}

// concurrentTriggers: every other node triggers the same settle at the
// same instant, each on the node after the last trigger's.
func (g *gen) concurrentTriggers() {
	deadline, settle := g.session().Deadline, g.settles[len(g.settles)-1]
	for n := 1; n < g.s.Nodes; n++ {
		g.plan = append(g.plan, planned{deadline, settle, (g.plan[len(g.plan)-1].node + 1) % g.s.Nodes})
	}
}

// earlyTriggers: 1..2 settle triggers before the deadline, 2..9.9 s into
// the session (20..99 ticks: after the claims start, before the 10s
// deadline), by a player or a skewed scheduler.
func (g *gen) earlyTriggers() {
	settle := g.settles[len(g.settles)-1]
	for range g.draw(1, 2, "early") {
		at := g.open() + time.Duration(g.draw(20, 99, "early-at"))*tick
		g.plan = append(g.plan, planned{at, settle, g.node()})
	}
}

// cancel: an operator cancels the session, half the time at the settle's
// instant (where rapid shrinks to: the two interleave), else just before
// or after it.
func (g *gen) cancel() {
	var by time.Duration
	if g.draw(0, 1, "cancel-races") == 1 {
		offs := []time.Duration{-time.Second, -time.Millisecond, time.Millisecond, tick, time.Second}
		by = offs[g.draw(0, len(offs)-1, "cancel-by")]
	}
	g.add(Request{Kind: Kinds.CancelSession, Session: g.session().ID}, g.session().Deadline+by, g.node())
}

// compensationTick: the compensation job's tick, 3 s after the settle,
// in the families whose faults leave a grant to compensate; in
// compensation-race it also runs during the settler's stall
// (stalledSettler).
func (g *gen) compensationTick() {
	g.add(Request{Kind: Kinds.Compensate, Session: -1}, g.session().Deadline+3*time.Second, g.node())
}

// burstClaims: when drawBurst drew it, 20 identical claims at once (source
// 004's concurrency test): one claim and 19 copies at its first
// arrival, over every node, interleaved by the switches.
func (g *gen) burstClaims() {
	if !g.burst {
		return
	}
	var claims []int
	for _, r := range g.s.Requests {
		if r.Kind == Kinds.ClaimItem {
			claims = append(claims, r.ID)
		}
	}
	id := claims[g.draw(0, len(claims)-1, "burst-claim")]
	at := g.plan[slices.IndexFunc(g.plan, func(d planned) bool { return d.req == id })].at
	for k := range 19 {
		g.plan = append(g.plan, planned{at, id, k % g.s.Nodes})
	}
	g.s.Concurrent = true
}

// concurrent marks the schedules whose requests at one instant on several
// nodes interleave (burstClaims marks its own: preset.interleaves).
func (g *gen) concurrent() { g.s.Concurrent = true }

// deliveries puts the plan in time order, stable: equal times keep the
// order planned.
func (g *gen) deliveries() {
	slices.SortStableFunc(g.plan, func(a, b planned) int { return cmp.Compare(a.at, b.at) })
	for _, d := range g.plan {
		g.s.Deliveries = append(g.s.Deliveries, engine.Delivery{At: d.at, Msg: d.req, Node: d.node})
	}
}
