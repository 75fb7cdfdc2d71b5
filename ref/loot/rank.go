package loot

import (
	"cmp"
	"slices"
	"time"
)

// RuleVersion names a ranking rule. A session records the version it was
// opened with; its result is computed and replayed by that version's
// Ranker for as long as the record exists.
type RuleVersion string

// The registered rule versions. All rank the same keys in the same order
// (priority from the intent, highest first; fairness score, lowest first;
// claim time, earliest first; player id, lowest first, which makes the
// order total: no two claims tie, so a result never depends on the order
// a database returned rows in). They differ in the fairness score only.
const (
	// RuleCount is the source document's rule: the score is Wins. Its
	// cold-start flaw is kept for replaying results made with it; a
	// newcomer at 0 outranks every veteran until it has won as often.
	RuleCount RuleVersion = "v1"
	// RuleSeeded is the document's first fix: the score is SeedMilli +
	// 1000*Wins, so a newcomer starts at the average instead of at 0.
	RuleSeeded RuleVersion = "v2-seeded"
	// RuleDaysSince is the document's second fix: the more whole days since
	// the player's last win (or, never having won, since Since) as of the
	// session's deadline, the better; the score is minus those days. A
	// newcomer joins the rotation at the back instead of the front.
	RuleDaysSince RuleVersion = "v3-days"
)

// Candidate is one frozen claim with the fairness the settler read for it:
// the ranking's input, as the audit snapshot records it.
type Candidate struct {
	Claim
	Fairness Fairness
}

// Ranker computes a session's winners, in rank order, from its quantity,
// deadline and frozen candidates. It is pure: the same input gives the
// same output on any node and at any later time, whatever the order of
// claims. PASS never wins; a player wins at most one item. A quantity
// below 1 (a corrupt row: Open refuses one) has no winners: Decide and
// Replay refuse it before asking.
type Ranker func(quantity int, deadline time.Time, claims []Candidate) []PlayerID

// rankers is the registry. A registered version's function must never
// change (recorded results are replayed with it): a new rule is a new
// version. The scores' derivations are on the RuleVersion constants.
var rankers = map[RuleVersion]Ranker{
	RuleCount:     rankBy(func(f Fairness, _ time.Time) int64 { return f.Wins }),
	RuleSeeded:    rankBy(func(f Fairness, _ time.Time) int64 { return f.SeedMilli + 1000*f.Wins }),
	RuleDaysSince: rankBy(daysSinceScore),
}

// RankerFor returns the ranker of version v.
func RankerFor(v RuleVersion) (Ranker, bool) {
	r, ok := rankers[v]
	return r, ok
}

// Rules lists the registered versions, sorted.
func Rules() []RuleVersion {
	vs := make([]RuleVersion, 0, len(rankers))
	for v := range rankers {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	return vs
}

// daysSinceScore is RuleDaysSince's score: -(whole days from the last win,
// or from Since, to the deadline). No history at all, or a reference at or
// after the deadline, counts as 0 days: the back of the rotation.
func daysSinceScore(f Fairness, deadline time.Time) int64 {
	from := f.LastWin
	if from.IsZero() {
		from = f.Since
	}
	if from.IsZero() || !deadline.After(from) {
		return 0
	}
	return -int64(deadline.Sub(from) / (24 * time.Hour))
}

// rankBy builds a Ranker ordering by priority desc, score asc, claim time
// asc, player id asc.
func rankBy(score func(Fairness, time.Time) int64) Ranker {
	type row struct {
		c     Candidate
		prio  int
		score int64
	}
	return func(quantity int, deadline time.Time, claims []Candidate) []PlayerID {
		rows := make([]row, 0, len(claims))
		for _, c := range claims {
			if p := c.Intent.Priority(); p > 0 {
				rows = append(rows, row{c, p, score(c.Fairness, deadline)})
			}
		}
		slices.SortFunc(rows, func(a, b row) int {
			return cmp.Or(
				cmp.Compare(b.prio, a.prio),
				cmp.Compare(a.score, b.score),
				a.c.At.Compare(b.c.At),
				cmp.Compare(a.c.Player, b.c.Player),
			)
		})
		var won []PlayerID
		for _, r := range rows {
			if len(won) >= quantity { // >=, not ==: a negative quantity must not let everyone win
				break
			}
			if !slices.Contains(won, r.c.Player) {
				won = append(won, r.c.Player)
			}
		}
		return won
	}
}
