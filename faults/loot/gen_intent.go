package lootfaults

import (
	"cmp"
	"slices"
	"time"
)

// intentChanges: intent-change's 1..3 further claims, each by a player who
// has claimed in the session, in time order: another intent than the
// player's current one (index 0 of the draw, where rapid shrinks to, is the
// higher-priority one: an upgrade, the case that moves a rank), or the same
// intent again (a repeat must keep the claim time); two changes of one
// player go back to an earlier intent. Each is sent on a node of its own
// draw, in a whole second of the window that no other claim of the session
// starts in (ruleSeconds): seconds 1..8 of the 10s window (claimWindow;
// second 9 is late-claim's, whose stalled claim may first arrive a tick
// before the deadline), after the previous change's, so the first free
// one, where rapid shrinks to, comes after the members' claims in seconds
// 1..claimers: the
// earliest claimer (player 1, where the player draw shrinks to) upgrading
// there ranks after every claim of that intent in between, so the change
// decides the rank whenever the two compare by time.
func (g *gen) intentChanges() {
	x, open := g.session().ID, g.open()
	byPlayer := map[PlayerID][]sentClaim{} // the session's claims, by player
	var players []PlayerID
	used := map[time.Duration]bool{} // the seconds the session's claims start in
	for _, r := range g.s.Requests {
		if r.Kind != Kinds.ClaimItem || r.Session != x {
			continue
		}
		at := g.plan[slices.IndexFunc(g.plan, func(d planned) bool { return d.req == r.ID })].at
		used[at.Truncate(time.Second)] = true
		if _, ok := byPlayer[r.Player]; !ok {
			players = append(players, r.Player)
		}
		byPlayer[r.Player] = append(byPlayer[r.Player], sentClaim{at, r.Intent})
	}
	if len(players) == 0 {
		return
	}
	slices.Sort(players)
	after := open // the previous change's second
	for range g.draw(1, 3, "intent-changes") {
		var free []time.Duration
		for k := 1; k <= 8; k++ {
			if sec := open + time.Duration(k)*time.Second; sec > after && !used[sec] {
				free = append(free, sec)
			}
		}
		if len(free) == 0 {
			return
		}
		sec := free[g.draw(0, len(free)-1, "change-second")]
		at := sec + time.Duration(g.draw(0, 9, "change-at"))*tick
		p := players[g.draw(0, len(players)-1, "change-player")]
		cur := currentIntent(byPlayer[p], at)
		// The other intents, higher priority first, then the same again.
		options := slices.DeleteFunc([]Intent{Intents.Need, Intents.Greed, Intents.Pass}, func(in Intent) bool { return in == cur })
		options = append(options, cur)
		in := options[g.draw(0, len(options)-1, "change-intent")]
		g.add(Request{Kind: Kinds.ClaimItem, Session: x, Player: p, Intent: in}, at, g.node())
		byPlayer[p] = append(byPlayer[p], sentClaim{at, in})
		used[sec], after = true, sec
	}
}

// sentClaim is one of a player's claims as the generator planned it.
type sentClaim struct {
	at time.Duration
	in Intent
}

// currentIntent is the intent of the last of cs sent before at (of the
// earliest, when at precedes them all).
func currentIntent(cs []sentClaim, at time.Duration) Intent {
	cs = slices.SortedStableFunc(slices.Values(cs), func(a, b sentClaim) int { return cmp.Compare(a.at, b.at) })
	in := cs[0].in
	for _, c := range cs {
		if c.at < at {
			in = c.in
		}
	}
	return in
}
