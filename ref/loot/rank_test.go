package loot

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// drawClaims draws up to 12 claims with small value ranges, so ties on
// every key but the player id are common.
func drawClaims(rt *rapid.T) []Candidate {
	n := rapid.IntRange(0, 12).Draw(rt, "n")
	ids := rapid.SliceOfNDistinct(rapid.Int64Range(1, 40), n, n, rapid.ID[int64]).Draw(rt, "ids")
	base := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	cs := make([]Candidate, n)
	for i := range cs {
		cs[i] = Candidate{
			Claim: Claim{
				Player: PlayerID(ids[i]),
				Intent: rapid.SampledFrom([]Intent{Need, Greed, Pass}).Draw(rt, "intent"),
				At:     base.Add(time.Duration(rapid.IntRange(0, 2).Draw(rt, "at")) * time.Microsecond),
			},
			Fairness: Fairness{
				Wins:      rapid.Int64Range(0, 2).Draw(rt, "wins"),
				SeedMilli: rapid.SampledFrom([]int64{0, 500, 1000}).Draw(rt, "seed"),
				LastWin:   base.Add(-time.Duration(rapid.IntRange(0, 3).Draw(rt, "last")) * 24 * time.Hour),
				Since:     base.Add(-time.Duration(rapid.IntRange(0, 3).Draw(rt, "since")) * 48 * time.Hour),
			},
		}
	}
	return cs
}

// bruteRank is the dumb alternative: repeatedly take the best remaining
// claim by comparing keys one by one, as a person would read the rule.
func bruteRank(score func(Fairness, time.Time) int64, quantity int, deadline time.Time, claims []Candidate) []PlayerID {
	better := func(a, b Candidate) bool {
		if a.Intent.Priority() != b.Intent.Priority() {
			return a.Intent.Priority() > b.Intent.Priority()
		}
		if sa, sb := score(a.Fairness, deadline), score(b.Fairness, deadline); sa != sb {
			return sa < sb
		}
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.Player < b.Player
	}
	left := slices.Clone(claims)
	var won []PlayerID
	for len(won) < quantity {
		best := -1
		for i, c := range left {
			if c.Intent.Priority() > 0 && (best < 0 || better(c, left[best])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		won = append(won, left[best].Player)
		left = slices.Delete(left, best, best+1)
	}
	return won
}

var scores = map[RuleVersion]func(Fairness, time.Time) int64{
	RuleCount:     func(f Fairness, _ time.Time) int64 { return f.Wins },
	RuleSeeded:    func(f Fairness, _ time.Time) int64 { return f.SeedMilli + 1000*f.Wins },
	RuleDaysSince: daysSinceScore,
}

// TestRankersAgreeWithBruteForceInAnyOrder: every registered ranker gives
// the brute-force answer, whatever the order of its input: the order is
// total, so a result never depends on how a database returned the rows.
func TestRankersAgreeWithBruteForceInAnyOrder(t *testing.T) {
	if len(scores) != len(Rules()) {
		t.Fatalf("scores lists %d rules, the registry %d", len(scores), len(Rules()))
	}
	rapid.Check(t, func(rt *rapid.T) {
		v := rapid.SampledFrom(Rules()).Draw(rt, "rule")
		rank, _ := RankerFor(v)
		claims := drawClaims(rt)
		q := rapid.IntRange(1, 5).Draw(rt, "quantity")
		deadline := time.Date(2026, 3, 1, 20, 0, 30, 0, time.UTC)
		want := bruteRank(scores[v], q, deadline, claims)
		got := rank(q, deadline, claims)
		if !slices.Equal(got, want) {
			rt.Fatalf("%s rank = %v, brute force %v", v, got, want)
		}
		shuffled := rapid.Permutation(claims).Draw(rt, "shuffled")
		if again := rank(q, deadline, shuffled); !slices.Equal(again, got) {
			rt.Fatalf("%s rank of a permutation = %v, of the original %v", v, again, got)
		}
		for _, p := range got {
			for _, c := range claims {
				if c.Player == p && c.Intent == Pass {
					rt.Fatalf("PASS claim of %d won", p)
				}
			}
		}
		// More items never change who won the first ones.
		if more := rank(q+1, deadline, claims); !slices.Equal(more[:len(got)], got) {
			rt.Fatalf("%s winners of %d items %v are not a prefix of those of %d: %v", v, q, got, q+1, more)
		}
	})
}

// TestColdStartPerRule replays the source document's 8.3: a newcomer joins
// a veteran who has won the ring 3 times (the server average is 4, so the
// veteran is below it) and has not won it for 30 days; both NEED the ring
// in each of 4 sessions, the winner's history updated after each. Under
// the document's count rule the newcomer wins until it has caught up;
// seeded at the average, or ranked by days since the last win, the
// veteran wins first and then they take turns.
func TestColdStartPerRule(t *testing.T) {
	const newcomer, veteran PlayerID = 1, 2
	start := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for v, want := range map[RuleVersion][]PlayerID{
		RuleCount:     {newcomer, newcomer, newcomer, newcomer},
		RuleSeeded:    {veteran, newcomer, veteran, newcomer},
		RuleDaysSince: {veteran, newcomer, veteran, newcomer},
	} {
		rank, _ := RankerFor(v)
		hist := map[PlayerID]Fairness{
			newcomer: {SeedMilli: 4000, Since: start.Add(-2 * 24 * time.Hour)},
			veteran:  {Wins: 3, LastWin: start.Add(-30 * 24 * time.Hour), Since: start.Add(-400 * 24 * time.Hour)},
		}
		var got []PlayerID
		for i := range 4 {
			deadline := start.Add(time.Duration(i) * 24 * time.Hour)
			claims := []Candidate{
				{Claim{Player: newcomer, Intent: Need, At: deadline.Add(-time.Second)}, hist[newcomer]},
				{Claim{Player: veteran, Intent: Need, At: deadline.Add(-time.Second)}, hist[veteran]},
			}
			w := rank(1, deadline, claims)[0]
			got = append(got, w)
			f := hist[w]
			f.Wins++
			f.LastWin = deadline
			hist[w] = f
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: winners %v, want %v", v, got, want)
		}
	}
}

// TestNeedAlwaysOutranksGreed: priority comes first whatever the fairness.
func TestNeedAlwaysOutranksGreed(t *testing.T) {
	at := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	for _, v := range Rules() {
		rank, _ := RankerFor(v)
		got := rank(1, at, []Candidate{
			{Claim{Player: 1, Intent: Greed, At: at}, Fairness{}},
			{Claim{Player: 2, Intent: Need, At: at.Add(time.Second)}, Fairness{Wins: 99, SeedMilli: 99000, LastWin: at}},
		})
		if !slices.Equal(got, []PlayerID{2}) {
			t.Errorf("%s: %v, want the NEED (2) over the GREED", v, got)
		}
	}
}

// TestRankersGiveNothingForANonPositiveQuantity: a quantity below 1 used
// to make every claimant a winner (the loop stopped at len == quantity,
// which a negative quantity never reaches).
func TestRankersGiveNothingForANonPositiveQuantity(t *testing.T) {
	at := time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)
	claims := []Candidate{{Claim: Claim{Player: 1, Intent: Need, At: at}}, {Claim: Claim{Player: 2, Intent: Greed, At: at}}}
	for _, v := range Rules() {
		r, _ := RankerFor(v)
		for _, q := range []int{0, -1, -1 << 31} {
			if got := r(q, at, claims); len(got) != 0 {
				t.Errorf("%s ranker, quantity %d: winners %v, want none", v, q, got)
			}
		}
	}
}
