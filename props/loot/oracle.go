package lootprops

import (
	"cmp"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// candidate is one claim as the oracle ranks it.
type candidate struct {
	player lootfaults.PlayerID
	prio   int
	wins   int64
	at     time.Duration
}

// oracle is source 004's rule (v1), written here apart from every design:
// of the claims that can win (NEED, GREED), the top quantity by priority
// descending, wins ascending, claim time ascending and, last, player id
// ascending, so the order is total; a player wins at most once. It
// returns the winners in rank order.
//
// A claim's time is when its current intent was declared (seen.claimedAt),
// not when its row first appeared: §4.4's third key is "first come, first
// served" among claims of equal priority, and a claim's priority is its
// intent, so its place is the intent's. Ranking by first appearance would
// let a player hold an early place with a PASS or GREED sent the instant
// claims open and upgrade to NEED at the last moment, ahead of everyone who
// declared NEED in between: the tie-break would reward a bot's reflex, the
// free-for-all §2.1 calls the least fair, not the decision §9 says the
// record is for. A repeat of the same intent (a retry) keeps the time.
func oracle(quantity int, cs []candidate) []lootfaults.PlayerID {
	cs = slices.DeleteFunc(slices.Clone(cs), func(c candidate) bool { return c.prio == 0 })
	slices.SortFunc(cs, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.prio, a.prio), cmp.Compare(a.wins, b.wins), cmp.Compare(a.at, b.at), cmp.Compare(a.player, b.player))
	})
	var won []lootfaults.PlayerID
	for _, c := range cs {
		if len(won) < quantity && !slices.Contains(won, c.player) {
			won = append(won, c.player)
		}
	}
	return won
}

// truth is what the oracle says the session's winners are: its frozen
// claims of members, with the server's fairness and the times the world
// saw their current intents written.
func (ss *seen) truth(s lootfaults.Schedule) []lootfaults.PlayerID {
	var cs []candidate
	for _, c := range ss.frozen {
		if s.Member(c.Player) {
			cs = append(cs, candidate{c.Player, c.Intent.Priority(), s.Wins(c.Player), ss.claimedAt[c.Player]})
		}
	}
	return oracle(ss.x.Quantity, cs)
}

// replay is what the oracle makes of the design's own evidence: the
// claims it recorded, with the fairness and the times it stored.
func replay(quantity int, claims []lootfaults.Claim) []lootfaults.PlayerID {
	cs := make([]candidate, len(claims))
	for i, c := range claims {
		cs[i] = candidate{c.Player, c.Intent.Priority(), c.Fair, c.At.Sub(engine.Epoch)}
	}
	return oracle(quantity, cs)
}

// sameSet reports whether a and b hold the same players.
func sameSet(a, b []lootfaults.PlayerID) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}
