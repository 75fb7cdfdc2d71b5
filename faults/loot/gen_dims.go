package lootfaults

import (
	"slices"
	"time"
)

// The steps of the dimensions every other family holds still (issue 26):
// a loot code two sessions share (shared-loot), a team that changes
// between sessions (team-change), a fairness record that changes during a
// run (fair-change). They run last in their lists (sessionSteps,
// genSteps) and only in their own families, so no other family's draws
// move.

// minSessions is how few sessions a schedule draws: 2 in the families
// whose dimension lies between two sessions, else 1.
func (g *gen) minSessions() int {
	if g.p.sharedLoot || g.p.teamChange || g.p.fairChange {
		return 2
	}
	return 1
}

// sharedLoot: a session after the first drops the loot code of an earlier
// one (the same boss drops the same item twice), two times in three (0,
// where rapid shrinks to, keeps a code of its own): a player may then win
// one item code twice, each under its own grant_no, session:player:loot
// (source 004's loot_grant).
func (g *gen) sharedLoot() {
	x := g.session()
	if x.ID == 0 || g.draw(0, 2, "shared") == 0 {
		return
	}
	x.Code = g.s.Sessions[g.draw(0, x.ID-1, "shared-with")].Loot()
}

// newcomer is the id of the player who joins the team at session x: past
// every member (at most 4) and outsider (at most 2 more, 5 and 6) the other
// steps name, so a joined family's outsiders stay outsiders.
func newcomer(x int) PlayerID { return PlayerID(6 + x) }

// teamChange: a session after the first takes a snapshot of its own, the
// previous session's team with one member gone (drawn; 0, where rapid
// shrinks to, is nobody) and, when nobody left or one in two times
// otherwise, a newcomer (newcomer) joined. The newcomer claims, NEED or
// GREED, 7 s into the session, and the member who left 0.1..0.9 s in (just
// after the start), if the claims step did not already make it claim:
// the two seconds of a session no other step puts a claim in (members
// claim in seconds 1..4, outsiders in 5..6, late-claim and clock-skew
// around the deadline, 8 s on), so only ties has two claims in one second.
// Source 004's §5 judges a claim by the session's snapshot, so the
// newcomer's claim must be taken and the leaver's refused.
func (g *gen) teamChange() {
	x := g.session()
	if x.ID == 0 {
		return
	}
	prev := g.s.TeamOf(x.ID - 1)
	team := slices.Clone(prev)
	left := g.draw(0, len(prev), "left")
	var leaver PlayerID
	if left > 0 {
		leaver = prev[left-1]
		team = slices.Delete(team, left-1, left)
	}
	joins := left == 0 || g.draw(0, 1, "joins") == 1
	if joins {
		team = append(team, newcomer(x.ID))
	}
	x.Members = team
	open := g.open()
	claim := func(p PlayerID, second time.Duration) {
		in := []Intent{Intents.Need, Intents.Greed}[g.draw(0, 1, "intent")]
		at := open + second*time.Second + time.Duration(g.draw(1, 9, "claim-at"))*tick
		g.add(Request{Kind: Kinds.ClaimItem, Session: x.ID, Player: p, Intent: in}, at, g.node())
	}
	if joins {
		claim(newcomer(x.ID), 7)
	}
	if leaver != 0 && !slices.ContainsFunc(g.s.Requests, func(r Request) bool {
		return r.Kind == Kinds.ClaimItem && r.Session == x.ID && r.Player == leaver
	}) {
		claim(leaver, 0)
	}
}

// fairChange: half the sessions (1, away from 0 where rapid shrinks to)
// change a member's fairness record by 1..2 wins when their claims
// freeze, as another team's win of the same item recorded while this one
// settles: a settler that reads the record twice reads two values.
func (g *gen) fairChange() {
	if g.draw(0, 1, "bumped") == 0 {
		return
	}
	p := PlayerID(g.draw(1, len(g.s.Team), "bump-player"))
	g.session().Bumps = []Fair{{Player: p, Wins: int64(g.draw(1, 2, "bump-by"))}}
}

// countWins: in fair-change the record counts every item the inventory
// applies as its player's win, so the first session's winner ranks lower
// in the second (Schedule.CountWins).
func (g *gen) countWins() { g.s.CountWins = true }
