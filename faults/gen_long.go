package faults

import (
	"slices"
	"sync"
	"time"

	"pgregory.net/rapid"
)

// Long-history's deep schedules and its drawn player. A plain long-history
// schedule is a thousand matches (about 2,300 settlements): a store that
// keeps a player's last 2,048 records, or a window with 4,096 settlements
// of slack, never meets a replay older than what it keeps, and a key
// hashed into 32 bits never meets a collision (about n^2/2^33 = 0.0006 of
// one among 2,300 keys). The deep schedule is what a declared bound must
// survive: one player's deepSettlements, replays from the very first
// match and from every power-of-two distance up to the history's length.

// deepEvery: long-history's seed k draws a deep schedule when k is a
// multiple of deepEvery. 10 is a default cell's whole long-history column
// (runsOf: DefaultMatrixN/20 = 10 runs, seeds 1..10), so the cell's last
// schedule is the deep one: every cell that runs the default seeds runs
// exactly one, after the nine plain ones (a design that fails a plain one
// is shrunk from it, not from 100,000 settlements), and a cell of another
// n or first seed still runs one in every 10.
const deepEvery = 10

// deepSettlements is the deep schedule's history: 100,000 settlements of
// one player (50,000 matches), 49 times a per-player store of 2,048
// records and 24 times a window with 4,096 settlements of slack, so that
// the replays of the first match at the end reach past both; and a key
// hashed into b bits collides by the birthday bound, n^2/2^(b+1) expected
// colliding pairs among n keys: 298 for b = 24, 18.6 for b = 28, 1.16 for
// b = 32, so a cell catches a key cut to b bits with probability
// 1 - e^-(n^2/2^(b+1)): for 24 and 28 bits surely (1 - 8e-9 at 28), for
// 32 bits about 7 times in 10 (props' TestKitFailsAFingerprintCutTo24To32Bits
// says which). More is dearer than it buys: the column's cost is this
// history, run once by every design of a matrix (a run holds its 600,000
// events of 160 bytes, about 100 MB, and ref's run takes about 0.5 CPU
// s), and 131,072 settlements would raise the 32-bit catch only to
// 1 - e^-2 = 0.86 for 31% more. Changing it moves the long-history pins
// and every long-history cell's coverage.
const deepSettlements = 100_000

// deepMatchesOf is how many matches each player of a deep schedule of
// preset p plays: deepSettlements in all. A join that adds settlements
// to a match (third-kind) or players to the history (wide-ids' team of up
// to 3) plays fewer, so that no deep schedule passes deepSettlements, and
// none passes engine.MaxDeliveries (3 players x 3 kinds x 50,000 matches
// would be 450,000).
func deepMatchesOf(p preset) int {
	kinds := 2
	if p.third {
		kinds = 3
	}
	return deepSettlements / (kinds * p.maxPlayers)
}

// isDeep reports whether long-history's seed selects a deep schedule.
// Seed 0 is not deep: rapid's Example(0) is where a pin of seeds 0..k
// starts, and it need not pay for a deep schedule there.
func isDeep(f Family, seed uint64) bool {
	return seed > 0 && seed%deepEvery == 0 && slices.Contains(f.Parts(), Families.LongHistory)
}

// deepCache keeps the deep schedules generated so far, by family and seed:
// drawing 50,000 matches costs about half a CPU second, and a matrix asks
// every design's cell for the same schedule. generateDeep hands out
// clones, so a caller that edits its copy does not edit the next one's. At
// most deepCacheMax are kept (8 MB each: 100,000 settlements of 56 bytes
// and as many deliveries of 24); a run over many seeds starts the cache
// over when it is full.
var deepCache struct {
	sync.Mutex
	m map[deepKey]Schedule
}

type deepKey struct {
	f    Family
	seed uint64
}

const deepCacheMax = 8

// generateDeep returns f's deep schedule of seed (f has long-history): its
// preset with deepMatchesOf matches and the firstMatchReplays step.
func generateDeep(f Family, seed uint64) Schedule {
	k := deepKey{f, seed}
	deepCache.Lock()
	s, ok := deepCache.m[k]
	deepCache.Unlock()
	if !ok {
		p := presetOf(f)
		p.deep = true
		m := deepMatchesOf(p)
		p.minMatches, p.maxMatches = m, m
		s = rapid.Custom(func(t *rapid.T) Schedule { return genSchedule(t, f, p, nil) }).Example(int(seed))
		deepCache.Lock()
		if deepCache.m == nil || len(deepCache.m) >= deepCacheMax {
			deepCache.m = map[deepKey]Schedule{}
		}
		deepCache.m[k] = s
		deepCache.Unlock()
	}
	return clone(s)
}

// firstMatchReplays: the deep schedule's replays of the player's first
// match, after the last match's first arrivals, one tick apart, then of
// match last-d for every power of two d below the history's length: the
// very first settlement comes back after every other was credited (what a
// store must remember longest), and each distance is some store's or
// window's bound doubled. Then 8 replays of a first-match settlement at
// drawn matches of the history, so that a replay of the oldest record
// also meets a store in the middle of its growth. Which kind each replays
// is drawn. 2 + 16 + 8 = 26 deliveries more for 50,000 matches: the cost
// of the deep schedule is its history, not its replays.
func (g *gen) firstMatchReplays() {
	last := g.all[len(g.all)-1]
	end := last.arrive + tick
	ofMatch := func(k int) *pending {
		i := indexes(g.all, func(a pending) bool { return a.match == k })
		return &g.all[i[g.draw(0, len(i)-1, "deep-kind")]]
	}
	firsts := indexes(g.all, func(a pending) bool { return a.match == 0 })
	for _, i := range firsts {
		g.again(&g.all[i], end)
		end += tick
	}
	for d := 1; d < last.match; d *= 2 {
		g.again(ofMatch(last.match-d), end)
		end += tick
	}
	for range 8 {
		k := g.draw(1, last.match, "deep-replay-at")
		a := &g.all[firsts[g.draw(0, len(firsts)-1, "deep-kind")]]
		g.again(a, a.arrive+time.Duration(k)*MatchEvery+tick)
	}
}

// longPlayer draws long-history's player id over its full width (never 0),
// so that the one player is not always player 1: drawn last of every step
// so that every other draw of the family stays as it was. In wide-ids
// joins the team's wide ids stand.
func (g *gen) longPlayer() {
	if g.p.wide {
		return
	}
	// Scrambled: rapid's Uint32Range drew player 1 for the deep seed 10.
	id := max(1, uint32(scrambled(g.t, "long-player")))
	for i := range g.s.Settlements {
		g.s.Settlements[i].Player = id
	}
}
