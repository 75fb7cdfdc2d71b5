package faults

import (
	"cmp"
	"math"
	"slices"
	"time"

	"pgregory.net/rapid"
)

// The settlement steps: who plays, in which rooms, what each match pays,
// and the settlements' identities. Their draws come first (genSteps).

// nodes draws the cluster of multi-node and concurrent: 2..3 nodes (2 is
// the smallest cluster; 3 makes round-robin retries skip a node).
func (g *gen) nodes() { g.s.Nodes = g.draw(2, 3, "nodes") }

// drawPlayers draws how many players play: 1..maxPlayers (see presetOf);
// wide-ids' team is at least 2, the smallest pair that shares a match.
func (g *gen) drawPlayers() {
	minPlayers := 1
	if g.p.wide {
		minPlayers = 2
	}
	g.players = g.draw(minPlayers, g.p.maxPlayers, "players")
	g.returnPlayer = -1
}

// drawReturnPlayer draws room-return's player who makes the forced
// return; in wide-ids the team follows player 0's rooms, so it is player 0.
func (g *gen) drawReturnPlayer() {
	if g.p.wide {
		g.returnPlayer = 0
		return
	}
	g.returnPlayer = g.draw(0, g.players-1, "return-player")
}

// walk is one player's way through its matches while they are drawn.
type walk struct {
	pl, matches int
	offset      time.Duration
	rewindAt    int      // sequence-rewind: the match whose seq restarts at 1 (-1: none)
	returnAt    int      // room-return: the match that returns to the room of returnAt-2 (-1: none)
	rooms       []uint32 // the room of each match so far
	instantNets []int64  // the instant's net of each match so far
	room, round uint32
	seq         uint64
}

// matches draws each player's matches and their settlements, player by
// player: the player's plan (matches, offset, rewind and return points),
// then per match its room and round, and its settlements. Sequence-rewind,
// room-return, wide-ids and third-kind shape it from inside, where their
// draws fall.
func (g *gen) matches() {
	for pl := range g.players {
		w := g.plan(pl)
		for k := range w.matches {
			g.enterRoom(w, k)
			g.playMatch(w, k)
		}
		if g.p.wide && pl == 0 {
			g.team.matches, g.team.offset, g.team.rooms = w.matches, w.offset, w.rooms
		}
	}
}

// plan draws player pl's matches (minMatches..maxMatches), its offset on
// the grid (0..7 ticks: anywhere within a match) and, in sequence-rewind,
// the match whose seq restarts (1..matches-1: after at least one match),
// in room-return the returning match (2..matches-1: two matches before it
// to return across). Wide-ids' team plays player 0's matches at its times.
func (g *gen) plan(pl int) *walk {
	w := &walk{pl: pl, rewindAt: -1, returnAt: -1}
	if g.p.wide && pl > 0 {
		w.matches, w.offset = g.team.matches, g.team.offset
	} else {
		w.matches = g.draw(g.p.minMatches, g.p.maxMatches, "matches")
		w.offset = time.Duration(g.draw(0, 7, "offset")) * tick
	}
	if g.p.rewind {
		w.rewindAt = g.draw(1, w.matches-1, "rewind-at")
	}
	if pl == g.returnPlayer {
		w.returnAt = g.draw(2, w.matches-1, "return-at")
	}
	w.rooms = make([]uint32, 0, w.matches)
	w.instantNets = make([]int64, 0, w.matches)
	return w
}

// enterRoom draws the room of match k and counts its round. After the
// first match: stay (0, where rapid shrinks to) or move (1, forced in
// late). A move may be a return to an earlier room, round restarting,
// which is how (room, round) repeats across matches; MinReturnGap keeps it
// at least two matches away except in room-return.
func (g *gen) enterRoom(w *walk, k int) {
	switch {
	case g.p.wide && w.pl > 0:
		w.room = g.team.rooms[k]
	case k == 0:
		w.room = uint32(g.draw(1, g.p.rooms, "room"))
	case k == w.returnAt:
		w.room = w.rooms[k-2]
	case k == w.returnAt-1 || k == w.returnAt-2:
		// Enter k-2's room at round 1, then leave it for k-1.
		w.room = g.moveTo(w, k)
	case g.p.alwaysMove || g.draw(0, 1, "move") == 1:
		w.room = g.moveTo(w, k)
	}
	if k > 0 && w.room == w.rooms[k-1] {
		w.round++
	} else {
		w.round = 1
	}
	w.rooms = append(w.rooms, w.room)
}

// moveTo draws the room of match k among those a move may enter: not the
// current one, none played within the last returnGap matches (roomsFor
// guarantees one is open).
func (g *gen) moveTo(w *walk, k int) uint32 {
	var open []uint32
	for r := uint32(1); r <= uint32(g.p.rooms); r++ {
		ok := r != w.rooms[k-1]
		for j := k - 1; ok && j >= 0 && j >= k-g.p.returnGap; j-- {
			ok = w.rooms[j] != r
		}
		if ok {
			open = append(open, r)
		}
	}
	return open[g.draw(0, len(open)-1, "move-to")]
}

// bornAt is when the sender produces each kind of settlement, from its
// match's start (see tick).
var bornAt = [...]time.Duration{KindInstant: 2 * tick, KindFinal: 4 * tick, KindThird: 5 * tick}

// playMatch draws match k's nets and adds its settlements (instant, final,
// and in third-kind a third), each first arriving when it is born.
func (g *gen) playMatch(w *walk, k int) {
	if k == w.rewindAt {
		w.seq = 0
	}
	start := w.offset + time.Duration(k)*MatchEvery
	var instantNet int64
	if k == w.returnAt {
		// The collision room-return exists for: k-2's instant
		// signature, (room, 1, net, false), is still in the window.
		instantNet = w.instantNets[k-2]
	} else {
		instantNet = genNets[g.draw(0, len(genNets)-1, "net")]
	}
	w.instantNets = append(w.instantNets, instantNet)
	kinds := []Kind{KindInstant, KindFinal}
	if g.p.third {
		kinds = append(kinds, KindThird)
	}
	for _, kind := range kinds {
		net := instantNet
		// Index 0 (same net as the instant) is the collision a
		// signature without the final flag cannot tell apart.
		if kind != KindInstant && g.draw(0, 1, "net-differs") == 1 {
			net = genNets[g.draw(0, len(genNets)-1, "net")]
		}
		final := kind == KindFinal
		if kind == KindThird {
			final = rapid.Bool().Draw(g.t, "third-final")
		}
		w.seq++
		born := start + bornAt[kind]
		g.all = append(g.all, pending{
			st:      Settlement{Player: uint32(w.pl + 1), Room: w.room, Round: w.round, Kind: kind, Net: net, Final: final, Seq: w.seq},
			born:    born,
			arrive:  born,
			player:  w.pl,
			match:   k,
			next:    start + MatchEvery,
			hasNext: k+1 < w.matches,
		})
	}
}

// sortByBirth puts the settlements in production order, the order of
// their IDs (ties: player, then kind, as generated).
func (g *gen) sortByBirth() {
	slices.SortStableFunc(g.all, func(a, b pending) int { return cmp.Compare(a.born, b.born) })
}

// number gives each settlement its ID (its index) and its match id (one
// per player's match, counting up in ID order; the team shares its
// matches in wide-ids, where the wide identities replace both), and
// records the settlements in the schedule.
func (g *gen) number() {
	matchIDs := map[[2]int]uint64{}
	for i := range g.all {
		a := &g.all[i]
		key := [2]int{a.player, a.match}
		if g.p.wide {
			key[0] = 0 // the team shares its matches
		}
		id, ok := matchIDs[key]
		if !ok {
			id = uint64(len(matchIDs) + 1)
			matchIDs[key] = id
		}
		a.st.ID = i
		a.st.Match = id
		if g.p.wide {
			a.st.Player, a.st.Match = g.widePlayers[a.player], g.wideMatches[a.match]
		}
		g.s.Settlements = append(g.s.Settlements, a.st)
	}
}

// drawWideIDs draws the wide-ids family's identities: full-width player ids
// and match ids, each next one differing from an earlier one in one bit.
// Player ids are never 0; the ids of one kind are distinct.
//
// Every bit position of every identity field is where some pair differs,
// over the schedules of a default cell: a player pair flips one of 32
// positions, a match pair one of 64, drawn uniformly per pair (2..3 players
// give 1..2 player pairs, 1..5 matches 0..4 match pairs, so a cell of 200
// schedules draws about 300 player flips and 400 match flips, several per
// position: TestWideIDsDifferInEveryBitOverACell sums them). The kind's
// bit 0 differs between a match's instant and final in every schedule; its
// bit 1 (instant against third) only joined with third-kind, the one family
// that has a third kind. A key that keeps b bits of a field, or of a
// hash that does not carry every input bit into the bits it keeps,
// collides wherever a pair flips a dropped bit.
func (g *gen) drawWideIDs() {
	t := g.t
	ps := []uint32{rapid.Uint32Range(1, math.MaxUint32).Draw(t, "player-id")}
	for len(ps) < g.players {
		ps = append(ps, uint32(flipBit(uint64(ps[len(ps)-1]), uniformBit(t, 32, "player-bit"), 32, func(v uint64) bool {
			return v == 0 || slices.Contains(ps, uint32(v))
		})))
	}
	// Match ids count up with time, as the world rules read them (a
	// player's matches in id order): the chain m0, m1 = m0 with one bit
	// flipped, m2 = m1 with one bit flipped, ... is drawn first, then
	// sorted, so that every flip may be at any of the 64 positions (a
	// flip of bit 63 makes one of the pair the larger, wherever it falls
	// in time) and the pairs stay one bit apart.
	ms := []uint64{rapid.Uint64().Draw(t, "match-id")}
	for len(ms) < g.team.matches {
		ms = append(ms, flipBit(ms[len(ms)-1], uniformBit(t, 64, "match-bit"), 64, func(v uint64) bool {
			return slices.Contains(ms, v)
		}))
	}
	slices.Sort(ms)
	g.widePlayers, g.wideMatches = ps, ms
}

// uniformBit draws a bit position 0..width-1, near uniformly over many
// schedules: rapid's integers lean toward small and edge values (where
// they shrink), which left some of 64 positions without a flip in a
// cell of 200; scrambling the drawn value (splitmix64's finaliser) spreads
// its distinct values over the positions. Rapid still shrinks the draw
// toward 0, which is one fixed position.
func uniformBit(t *rapid.T, width int, label string) int {
	return int(scrambled(t, label) % uint64(width))
}

// scrambled draws a uint64 and scrambles it (splitmix64's finaliser), so
// that rapid's lean toward small values does not carry into the value.
func scrambled(t *rapid.T, label string) uint64 {
	z := rapid.Uint64().Draw(t, label) + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// flipBit is v with bit b flipped, or, if taken says that value is taken,
// with the next bit up flipped instead (wrapping at width): one of width
// candidates is free whenever fewer than width values are taken.
func flipBit(v uint64, b, width int, taken func(uint64) bool) uint64 {
	for i := range width {
		if c := v ^ 1<<((b+i)%width); !taken(c) {
			return c
		}
	}
	panic("faults: every one-bit neighbour is taken")
}
