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

// truths are what the oracle says the session's winners may be: its
// frozen claims of members of its snapshot, with the times the world saw
// their current intents written, ranked under the server's fairness record as of one
// moment of the settle (checkRuleOrder says why): the record at the freeze
// first, then after each change of it up to the first record of the
// session CLOSED.
func (ss *seen) truths(h lootfaults.History) [][]lootfaults.PlayerID {
	var cs []candidate
	for _, c := range ss.frozen {
		if h.Schedule.MemberOf(ss.x.ID, c.Player) {
			cs = append(cs, candidate{c.Player, c.Intent.Priority(), 0, ss.claimedAt[c.Player]})
		}
	}
	closed := len(h.Events)
	if i := slices.IndexFunc(ss.views, func(v lootfaults.Event) bool { return v.Detail.Record.Status == lootfaults.Statuses.Closed }); i >= 0 {
		closed = ss.views[i].Seq
	}
	moments := []int{ss.freeze.Seq}
	for _, e := range h.Events[ss.freeze.Seq:closed] {
		if e.Kind == lootfaults.Events.Fair || (e.Kind == lootfaults.Events.Item && e.Detail.OK && h.Schedule.CountWins) {
			moments = append(moments, e.Seq+1)
		}
	}
	var out [][]lootfaults.PlayerID
	for _, at := range moments {
		for i := range cs {
			cs[i].wins = h.WinsAt(cs[i].player, at)
		}
		out = append(out, oracle(ss.x.Quantity, cs))
	}
	return out
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
