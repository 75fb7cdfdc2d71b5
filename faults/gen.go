package faults

import (
	"cmp"
	"math"
	"slices"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/engine"
)

// Generated schedules live on a grid of ticks. A player's match k starts at
// k*MatchEvery (plus the player's offset); its instant settlement is sent at
// +2 ticks (the player leaves), its final at +4 (the match ends), its third
// at +5. Eight ticks per match leave room to place a late arrival between
// the next match's start (+8) and its instant (+10), and an interleaved one
// after that instant. Changing tick changes every placement below.
const tick = MatchEvery / 8

// Sender defaults of generated schedules.
const (
	// genRetryAfter is 2 ticks: a nacked settlement is resent within the
	// player's current match, well inside WindowTTL (20 ticks), so retries
	// exercise a design's fast path, not only its durable store.
	genRetryAfter = 2 * tick
	// genSlowRetryAfter is the slow sender of the fault families: a minute,
	// longer than the leases designs put on a claim (seconds to tens of
	// seconds; a lease is how long a crashed node's claim blocks others), so
	// the retry meets a lapsed lease, and longer than every window.
	genSlowRetryAfter = time.Minute
	// genMaxAttempts bounds sends per settlement: at most 7 planned
	// arrivals of one settlement (1 first + 2 duplicates + 2 replays + 2
	// window-expiry copies), plus at most 4 injected faults that each cost
	// one retry, plus 5 for a design's own transient nacks (a claim held by
	// a crashed node until its lease runs out). 7+4+5 = 16.
	genMaxAttempts = 16
)

// Small value ranges make distinct settlements collide on purpose: a
// design that recognises a settlement by some of its fields (room, round,
// net, final) must meet a settlement that differs only in a field it drops,
// or its bug can never show. Where each collision happens (the impls tests
// count them per design, TestGenExercisesEveryMutantRule):
//
//   - same (round, net, final) in adjacent matches: a player who leaves a
//     room after round 1 plays the next match at round 1 too, with equal
//     nets 1 time in 3. Every family.
//   - same (room, round, net) in one match: its instant and final with
//     equal nets (the final's net is the instant's unless "net-differs"
//     draws 1). Every family.
//   - same (room, round, final) with another net: only a third kind with
//     its sibling's final flag. Third-kind.
//   - a copy of match k's settlement arriving in match k+2, after 3 newer
//     settlements of its player. Duplicate (see the preset).
//   - a settlement arriving when the player's latest instant was in another
//     room: an old final interleaved after the next match's instant
//     (interleave), or a late instant after its own final (late).
//
// A full collision (room, round, net, final all equal) of distinct
// settlements happens only where a family makes it: a quick room return
// (room-return; MinReturnGap keeps it out of the others) and a third kind
// paying what its sibling pays (third-kind).
var (
	// genNets are the amounts, debits included. Index 0 is where rapid
	// shrinks to, so a shrunk counterexample has all nets equal: the most
	// collisions, the fewest distinguishing details.
	genNets = []int64{10, -10, 20}
)

// roomsFor is how many rooms a player of a family with return gap g moves
// between: g+1, and at least 3. A move may not go to the current room nor to
// a room played within the last g matches (MinReturnGap), and those g
// matches used at most g rooms: with g+1 rooms one is always open, which the
// late family needs (every next match in another room). At least 3 so that
// with g = 1 (room-return) a move is not always a return. With g = 2 and 3
// rooms, a player who moves every match cycles A, B, C, A: the return to A
// comes exactly 2 matches after leaving it.
func roomsFor(g int) int { return max(3, g+1) }

// preset is what a family switches on. Families combine by OR.
type preset struct {
	maxPlayers  int  // players draw 1..maxPlayers
	minMatches  int  // matches per player draw minMatches..maxMatches
	maxMatches  int  //
	third       bool // third-kind: a third settlement per match
	alwaysMove  bool // late: every next match is in another room
	duplicate   bool // extra copies close together
	late        bool // instants or finals arrive after the next match started
	interleave  bool // old finals arrive after the new instant
	deepReplay  bool // a queue replays a block of settlements 3..6 matches old
	expiry      bool // copies just past WindowTTL
	crash       bool // CrashBefore/CrashAfter at effects 0..3
	storeError  bool // FailBefore at effects 0..3
	timeout     bool // TimeoutAfter at effects 0..3
	multiNode   bool // 2..3 nodes, copies and retries on other nodes
	concurrent  bool // identical deliveries at the same At on 2..3 nodes
	rewind      bool // the sender's seq restarts once per player
	nodeFailure bool // multi-node: FailBefore at effect 0 so retries move node
	roomReturn  bool // room-return: one forced return within two matches, colliding net
	wide        bool // wide-ids: a team shares matches; wide ids in one-bit pairs
	long        bool // long-history: a thousand matches, replays from far back
	sender      bool // crash, store-error, timeout: draw a fast, slow or giving-up sender
	returnGap   int  // MinReturnGap of the family
	rooms       int  // roomsFor(returnGap)
}

// presetOf returns the preset of a family, or of a Join of families. Each
// family's comment says what it does and why its numbers are what they are.
func presetOf(f Family) preset {
	// Base for every family: 1..3 players (3 is enough for players to share
	// rooms and for per-player state to be tested against another player's
	// identical fields), 1..5 matches each (5 matches span 2.5 times any
	// per-player state of two adjacent matches, so such state must evict;
	// 3x5x2 = 30 first arrivals keeps a schedule near 50 deliveries with
	// the extras below).
	if err := checkFamily(f); err != nil {
		panic("faults: " + err.Error())
	}
	p := preset{maxPlayers: 3, minMatches: 1, maxMatches: 5}
	for _, part := range f.Parts() {
		switch part {
		case Clean:
			// Every settlement once, in order: the baseline every design
			// must hold; a failure here is a plain bug.
		case Duplicate:
			// 1..6 extra copies, 0..2 ticks after the first arrival (inside
			// RetryAfter and WindowTTL, the window's fast path) or 1 tick
			// after the player's match k+2 starts, for a settlement of match
			// k: the latest a copy can come that per-player state of two
			// adjacent matches still promises to catch (3 newer settlements
			// of k and k+1 arrived in between), still inside WindowTTL (2
			// matches - 1 tick after the earliest arrival, 2 ticks into
			// match k).
			p.duplicate = true
		case Late:
			// 1..4 times, a match's instant or final arrives 0..1.5 ticks
			// after the next match started (before the next instant at +2 ticks), and the
			// player moved to another room: "the player is already in the
			// new room when the old room's final arrives" (seed 001 §3).
			// Every next match in another room: roomsFor keeps a room open.
			p.late = true
			p.alwaysMove = true
			p.minMatches = max(p.minMatches, 2)
		case DeepReplay:
			// 1..2 batches: a queue replays 1..6 consecutive settlements,
			// in their order, 3..6 matches after they first arrived; 3
			// matches > WindowTTL (2.5 matches), so only durable state can
			// catch them.
			p.deepReplay = true
		case Interleave:
			// 1..4 times, the old match's final arrives 0.5..2 ticks after
			// the new match's instant (seed 001 §2: its seq is the predecessor of
			// the instant that was already processed).
			p.interleave = true
			p.minMatches = max(p.minMatches, 2)
		case WindowExpiry:
			// 1..4 copies at exactly WindowTTL, WindowTTL+1ns or
			// WindowTTL+1 tick after the first arrival: the window forgot
			// (an entry put at t is gone at t+ttl), the store must catch it.
			p.expiry = true
		case Crash:
			p.sender = true
			// 1..4 crashes, before or after effect 0..3 of an attempt
			// among the planned ones: 4 effects cover claim, credit, commit
			// and one past the last (the lost ack) of a three-effect design.
			p.crash = true
		case StoreError:
			p.sender = true
			// 1..4 FailBefore faults at effects 0..3: the store or sink
			// refused, nothing happened, the sender retries.
			p.storeError = true
		case TimeoutSuccess:
			p.sender = true
			// 1..4 TimeoutAfter faults at effects 0..3: the effect happened,
			// the caller was told it timed out.
			p.timeout = true
		case MultiNode:
			// 2..3 nodes (2 is the smallest cluster; 3 makes round-robin
			// retries skip a node), first arrivals on random nodes, 1..4
			// close copies on another node, 0..2 failures before the first
			// effect so the sender's retry lands on the next node.
			p.multiNode = true
			p.nodeFailure = true
		case Concurrent:
			// 2..3 identical copies of every first arrival at the same
			// instant on distinct nodes: goroutines race on one settlement,
			// interleaved at every env call as Switches says. Only identical copies: an instant racing its own
			// final is an ordering fault, the business of late and
			// interleave, and mixing it in would blur the column. No faults
			// (under RunOptions.Free attempt numbers are not deterministic).
			// The interleaving is drawn too: Schedule.Switches, below.
			p.concurrent = true
		case SequenceRewind:
			// Each player's seq restarts at 1 from one match on (the sender
			// restarted and lost its counter): 2..5 matches so a rewind
			// point exists.
			p.rewind = true
			p.minMatches = max(p.minMatches, 2)
		case ThirdKind:
			// Three settlements per match (instant, final, third): 6 per two
			// adjacent matches, where the business promised 4.
			p.third = true
		case SmallScope:
			// Not a preset: Gen samples Enumerate(DefaultScope) instead.
		case WideIDs:
			// 2..3 players (a team; 2 is the smallest pair that shares a
			// match) playing the same matches in the same rooms. Player ids
			// and match ids are drawn full width, each next one differing
			// from the previous in one random bit: a key that drops the
			// player collides on every shared match, one that keeps 16 bits
			// of an id collides whenever the flipped bit is above them (3
			// times in 4 for a player id, 12 in 16 for a match id).
			p.wide = true
			p.maxPlayers = 3
		case LongHistory:
			// One player, 1000..1200 matches (2000+ settlements, 400+ ttl
			// spans of the window), 5..20 replays of single settlements
			// from 3 to 1000 matches later, and close duplicates. A design
			// whose memory grows with history instead of rate x ttl shows
			// (BoundedState), and so does a store that forgets records
			// older than some count (NoDup on the far replays). A run is
			// about 40 times a plain family's: the matrix still runs it in
			// seconds.
			p.long = true
			p.duplicate = true
			p.minMatches, p.maxMatches = max(p.minMatches, 1000), 1200
		case RoomReturn:
			// One player returns, once, to the room of the match before
			// the previous one (k-2 -> k-1 elsewhere -> k), both entries at
			// round 1 and the returning match's instant paying what k-2's
			// paid: the same (room, round, net, final) two matches apart. 3..5
			// matches so the pattern fits. Other moves may return right
			// away too (MinReturnGap is 1 here).
			p.roomReturn = true
			p.minMatches = max(p.minMatches, 3)
		}
	}
	if p.long && !p.wide {
		// One player's history is what long-history is about; joined with
		// wide-ids the team keeps its 2..3 players.
		p.maxPlayers = 1
	}
	p.returnGap = MinReturnGap(f)
	p.rooms = roomsFor(p.returnGap)
	return p
}

// Gen returns a rapid generator of schedules of family f (a family of
// Families or a Join of them). Schedules are small (about 10..60
// deliveries) and shrink toward fewer players, matches, copies and faults,
// and toward equal nets. Gen panics on an unknown family.
func Gen(f Family) *rapid.Generator[Schedule] {
	if f == SmallScope {
		return rapid.SampledFrom(smallScope())
	}
	p := presetOf(f)
	return rapid.Custom(func(t *rapid.T) Schedule { return genSchedule(t, f, p, nil) })
}

// generate returns the schedule of family f that seed selects: the same
// (f, seed) gives the same schedule as long as the generator code is the
// same. Commit a failing schedule's text, not its seed.
func generate(f Family, seed uint64) Schedule {
	return Gen(f).Example(int(seed))
}

// pending is a settlement before IDs are assigned.
type pending struct {
	st      Settlement
	born    time.Duration // when the sender produced it: orders IDs and seq
	arrive  time.Duration // its first arrival
	player  int
	match   int // the player's match index
	node    int
	next    time.Duration // when the player's next match starts
	hasNext bool          // the player plays a next match
}

// indexes returns the indexes of the elements of all that keep accepts.
func indexes(all []pending, keep func(pending) bool) []int {
	var out []int
	for i, a := range all {
		if keep(a) {
			out = append(out, i)
		}
	}
	return out
}

// genSchedule draws one schedule. If trace is not nil it receives the
// settlements with their generation-time facts (in ID order), for tests.
func genSchedule(t *rapid.T, f Family, p preset, trace *[]pending) Schedule {
	s := Schedule{Frame: engine.Frame{Family: f, Nodes: 1, RetryAfter: genRetryAfter, MaxAttempts: genMaxAttempts, Concurrent: p.concurrent}}
	if p.multiNode || p.concurrent {
		s.Nodes = rapid.IntRange(2, 3).Draw(t, "nodes")
	}
	kinds := []Kind{KindInstant, KindFinal}
	if p.third {
		kinds = append(kinds, KindThird)
	}
	bornAt := [...]time.Duration{KindInstant: 2 * tick, KindFinal: 4 * tick, KindThird: 5 * tick}

	var all []pending
	minPlayers := 1
	if p.wide {
		minPlayers = 2
	}
	players := rapid.IntRange(minPlayers, p.maxPlayers).Draw(t, "players")
	returnPlayer := -1 // room-return: the player who makes the forced return
	if p.roomReturn && !p.wide {
		returnPlayer = rapid.IntRange(0, players-1).Draw(t, "return-player")
	} else if p.roomReturn {
		returnPlayer = 0 // the team follows player 0's rooms
	}
	// wide-ids: the team plays player 0's matches, at its times, in its
	// rooms.
	var team struct {
		matches int
		offset  time.Duration
		rooms   []uint32
	}
	for pl := range players {
		var matches int
		var offset time.Duration
		if p.wide && pl > 0 {
			matches, offset = team.matches, team.offset
		} else {
			matches = rapid.IntRange(p.minMatches, p.maxMatches).Draw(t, "matches")
			offset = time.Duration(rapid.IntRange(0, 7).Draw(t, "offset")) * tick
		}
		rewindAt := -1
		if p.rewind {
			rewindAt = rapid.IntRange(1, matches-1).Draw(t, "rewind-at")
		}
		returnAt := -1 // the match that returns to the room of returnAt-2
		if pl == returnPlayer {
			returnAt = rapid.IntRange(2, matches-1).Draw(t, "return-at")
		}
		roomOf := make([]uint32, 0, matches)
		instantNets := make([]int64, 0, matches)
		// moveTo draws the room of match k among those a move may enter:
		// not the current one, none played within the last returnGap
		// matches (roomsFor guarantees one is open).
		moveTo := func(k int) uint32 {
			var open []uint32
			for r := uint32(1); r <= uint32(p.rooms); r++ {
				ok := r != roomOf[k-1]
				for j := k - 1; ok && j >= 0 && j >= k-p.returnGap; j-- {
					ok = roomOf[j] != r
				}
				if ok {
					open = append(open, r)
				}
			}
			return open[rapid.IntRange(0, len(open)-1).Draw(t, "move-to")]
		}
		var room, round uint32
		var seq uint64
		for k := range matches {
			// After the first match: stay (0, where rapid shrinks to) or
			// move (1, forced in late). A move may be a return to an
			// earlier room, round restarting, which is how (room, round)
			// repeats across matches; MinReturnGap keeps it at least two
			// matches away except in room-return.
			switch {
			case p.wide && pl > 0:
				room = team.rooms[k]
			case k == 0:
				room = uint32(rapid.IntRange(1, p.rooms).Draw(t, "room"))
			case k == returnAt:
				room = roomOf[k-2]
			case k == returnAt-1 || k == returnAt-2:
				// Enter k-2's room at round 1, then leave it for k-1.
				room = moveTo(k)
			case p.alwaysMove || rapid.IntRange(0, 1).Draw(t, "move") == 1:
				room = moveTo(k)
			}
			if k > 0 && room == roomOf[k-1] {
				round++
			} else {
				round = 1
			}
			roomOf = append(roomOf, room)
			if k == rewindAt {
				seq = 0
			}
			start := offset + time.Duration(k)*MatchEvery
			var instantNet int64
			if k == returnAt {
				// The collision room-return exists for: k-2's instant
				// signature, (room, 1, net, false), is still in the window.
				instantNet = instantNets[k-2]
			} else {
				instantNet = genNets[rapid.IntRange(0, len(genNets)-1).Draw(t, "net")]
			}
			instantNets = append(instantNets, instantNet)
			for _, kind := range kinds {
				net := instantNet
				// Index 0 (same net as the instant) is the collision a
				// signature without the final flag cannot tell apart.
				if kind != KindInstant && rapid.IntRange(0, 1).Draw(t, "net-differs") == 1 {
					net = genNets[rapid.IntRange(0, len(genNets)-1).Draw(t, "net")]
				}
				final := kind == KindFinal
				if kind == KindThird {
					final = rapid.Bool().Draw(t, "third-final")
				}
				seq++
				born := start + bornAt[kind]
				arrive := born
				all = append(all, pending{
					st:      Settlement{Player: uint32(pl + 1), Room: room, Round: round, Kind: kind, Net: net, Final: final, Seq: seq},
					born:    born,
					arrive:  arrive,
					player:  pl,
					match:   k,
					next:    start + MatchEvery,
					hasNext: k+1 < matches,
				})
			}
		}
		if p.wide && pl == 0 {
			team.matches, team.offset, team.rooms = matches, offset, roomOf
		}
	}
	// Late and interleaved arrivals: 1..4 picks each (at least one, so every
	// schedule of the family has the feature; rapid shrinks toward one).
	if p.late {
		// Any settlement of a match that has a next one: it arrives 0..1.5
		// ticks after the next match started, before that match's instant.
		eligible := indexes(all, func(a pending) bool { return a.hasNext })
		for range rapid.IntRange(1, 4).Draw(t, "lates") {
			a := &all[eligible[rapid.IntRange(0, len(eligible)-1).Draw(t, "late")]]
			a.arrive = a.next + time.Duration(rapid.IntRange(0, 3).Draw(t, "late-by"))*tick/2
		}
	}
	if p.interleave {
		// A final of a match that has a next one: it arrives 0.5..2 ticks
		// after the next match's instant (+2 ticks).
		eligible := indexes(all, func(a pending) bool { return a.hasNext && a.st.Kind == KindFinal })
		for range rapid.IntRange(1, 4).Draw(t, "interleaves") {
			a := &all[eligible[rapid.IntRange(0, len(eligible)-1).Draw(t, "interleaved")]]
			a.arrive = a.next + 2*tick + time.Duration(rapid.IntRange(1, 4).Draw(t, "interleave-by"))*tick/2
		}
	}
	// IDs in production order (ties: player, then kind, as generated).
	slices.SortStableFunc(all, func(a, b pending) int { return cmp.Compare(a.born, b.born) })
	var widePlayers []uint32
	var wideMatches []uint64
	if p.wide {
		widePlayers, wideMatches = drawWideIDs(t, players, team.matches)
	}
	matchIDs := map[[2]int]uint64{}
	for i := range all {
		a := &all[i]
		key := [2]int{a.player, a.match}
		if p.wide {
			key[0] = 0 // the team shares its matches
		}
		id, ok := matchIDs[key]
		if !ok {
			id = uint64(len(matchIDs) + 1)
			matchIDs[key] = id
		}
		a.st.ID = i
		a.st.Match = id
		if p.wide {
			a.st.Player, a.st.Match = widePlayers[a.player], wideMatches[a.match]
		}
		s.Settlements = append(s.Settlements, a.st)
	}
	n := len(all)

	// First arrivals.
	var dels []engine.Delivery
	for i := range all {
		a := &all[i]
		if p.multiNode {
			a.node = rapid.IntRange(0, s.Nodes-1).Draw(t, "node")
		}
		copies := 1
		if p.concurrent {
			copies = rapid.IntRange(2, s.Nodes).Draw(t, "copies")
		}
		for c := range copies {
			dels = append(dels, engine.Delivery{At: a.arrive, Msg: i, Node: (a.node + c) % s.Nodes})
		}
	}
	pick := func(label string) *pending { return &all[rapid.IntRange(0, n-1).Draw(t, label)] }
	if p.duplicate {
		// Gaps: 0 (the same instant), 1ms, 1 tick, 2 ticks (= RetryAfter).
		// Gaps: 0 (the same instant), 1ms, 1 tick, 2 ticks (= RetryAfter),
		// or (-1) 1 tick into the player's match k+2 (see the preset).
		gaps := []time.Duration{0, time.Millisecond, tick, 2 * tick, -1}
		for range rapid.IntRange(1, 6).Draw(t, "duplicates") {
			a := pick("dup-of")
			at := a.arrive + gaps[rapid.IntRange(0, len(gaps)-1).Draw(t, "dup-gap")]
			if at < a.arrive {
				at = a.next + MatchEvery + tick
			}
			dels = append(dels, engine.Delivery{At: at, Msg: a.st.ID, Node: a.node})
		}
	}
	if p.multiNode {
		for range rapid.IntRange(1, 4).Draw(t, "other-node-copies") {
			a := pick("copy-of")
			gap := time.Duration(rapid.IntRange(0, 2).Draw(t, "copy-gap")) * tick
			other := (a.node + rapid.IntRange(1, s.Nodes-1).Draw(t, "copy-node")) % s.Nodes
			dels = append(dels, engine.Delivery{At: a.arrive + gap, Msg: a.st.ID, Node: other})
		}
	}
	if p.deepReplay {
		for range rapid.IntRange(1, 2).Draw(t, "replays") {
			lo := rapid.IntRange(0, n-1).Draw(t, "replay-from")
			count := rapid.IntRange(1, 6).Draw(t, "replay-count")
			shift := time.Duration(rapid.IntRange(3, 6).Draw(t, "replay-matches")) * MatchEvery
			for i := lo; i < n && i < lo+count; i++ {
				dels = append(dels, engine.Delivery{At: all[i].arrive + shift, Msg: i, Node: all[i].node})
			}
		}
	}
	if p.long {
		// Replays of single settlements 3..1000 matches after their first
		// arrival (within the schedule's span or past it: a queue can hold
		// a message for days).
		for range rapid.IntRange(5, 20).Draw(t, "far-replays") {
			a := pick("far-replay-of")
			shift := time.Duration(rapid.IntRange(3, 1000).Draw(t, "far-replay-matches")) * MatchEvery
			dels = append(dels, engine.Delivery{At: a.arrive + shift, Msg: a.st.ID, Node: a.node})
		}
	}
	if p.expiry {
		eps := []time.Duration{0, time.Nanosecond, tick}
		for range rapid.IntRange(1, 4).Draw(t, "expiry-copies") {
			a := pick("expiry-of")
			e := eps[rapid.IntRange(0, len(eps)-1).Draw(t, "expiry-eps")]
			dels = append(dels, engine.Delivery{At: a.arrive + WindowTTL + e, Msg: a.st.ID, Node: a.node})
		}
	}
	// Stable: equal times keep generation order (first arrivals first).
	slices.SortStableFunc(dels, func(a, b engine.Delivery) int { return cmp.Compare(a.At, b.At) })
	s.Deliveries = dels

	// Faults: attempts among the planned deliveries, each of which is an
	// attempt, so every fault drawn here fires (unless its effect index is
	// past what a fail or timeout can hit).
	var faults []engine.Fault
	addFaults := func(label string, minN, maxN, maxEffect int, kinds ...engine.FaultKind) {
		for range rapid.IntRange(minN, maxN).Draw(t, label) {
			faults = append(faults, engine.Fault{
				Attempt: rapid.IntRange(0, len(dels)-1).Draw(t, "attempt"),
				Effect:  rapid.IntRange(0, maxEffect).Draw(t, "effect"),
				Kind:    kinds[rapid.IntRange(0, len(kinds)-1).Draw(t, "kind")],
			})
		}
	}
	if p.crash {
		addFaults("crashes", 1, 4, 3, engine.CrashBefore, engine.CrashAfter)
	}
	if p.storeError {
		addFaults("failures", 1, 4, 3, engine.FailBefore)
	}
	if p.timeout {
		addFaults("timeouts", 1, 4, 3, engine.TimeoutAfter)
	}
	if p.nodeFailure {
		addFaults("node-failures", 0, 2, 0, engine.FailBefore)
	}
	// Canonical order; of two faults at one point the first drawn wins.
	slices.SortStableFunc(faults, func(a, b engine.Fault) int {
		return cmp.Or(cmp.Compare(a.Attempt, b.Attempt), cmp.Compare(a.Effect, b.Effect))
	})
	faults = slices.CompactFunc(faults, func(a, b engine.Fault) bool { return a.Attempt == b.Attempt && a.Effect == b.Effect })
	if len(faults) > 0 {
		s.Faults = faults
	}
	if p.concurrent {
		// The interleaving, drawn last so the draws above (and every other
		// family) are unchanged. Values 0..2: a group runs at most 3
		// goroutines (one per node, Nodes <= 3), so larger values only
		// repeat these modulo. Up to 48 choices: a group of 2..3 copies of
		// one settlement makes about 3 choices per attempt (its start and
		// its env calls, ~3 for a three-effect design), about 8 per group,
		// so 48 interleave the first 6 groups or so; later groups run in
		// the sequential order. Rapid shrinks toward fewer and zero
		// switches: the sequential order, where a shrunk counterexample
		// keeps only the switches its bug needs.
		sw := rapid.SliceOfN(rapid.IntRange(0, 2), 0, 48).Draw(t, "switches")
		if len(sw) > 0 {
			s.Switches = sw
		}
	}
	if p.sender {
		// Drawn after everything else, so the other draws (and families)
		// are unchanged. 0, where rapid shrinks to, is the fast sender.
		switch rapid.IntRange(0, 2).Draw(t, "sender") {
		case 1:
			s.RetryAfter = genSlowRetryAfter
		case 2:
			// One send, no resend at the drain: what a crash or a
			// failure left unfinished, only Recover completes.
			s.MaxAttempts, s.GiveUp = 1, true
		}
	}
	if p.crash {
		// 0..1 crash inside Recover: of the first 3 recovery calls (the
		// rebuilt nodes' and the drain's), at its effect 0..3.
		for range rapid.IntRange(0, 1).Draw(t, "recover-crashes") {
			s.Faults = append(s.Faults, engine.Fault{
				Attempt: engine.Recovery(rapid.IntRange(0, 2).Draw(t, "recovery")),
				Effect:  rapid.IntRange(0, 3).Draw(t, "effect"),
				Kind:    []engine.FaultKind{engine.CrashBefore, engine.CrashAfter}[rapid.IntRange(0, 1).Draw(t, "kind")],
			})
		}
		slices.SortStableFunc(s.Faults, func(a, b engine.Fault) int {
			return cmp.Or(cmp.Compare(a.Attempt, b.Attempt), cmp.Compare(a.Effect, b.Effect))
		})
	}
	if trace != nil {
		*trace = all
	}
	return s
}

// drawWideIDs draws the wide-ids family's identities: full-width player ids
// and match ids, each next one differing from the previous in one bit.
// Player ids are never 0; the ids of one kind are distinct; match ids grow.
func drawWideIDs(t *rapid.T, players, matches int) ([]uint32, []uint64) {
	ps := []uint32{rapid.Uint32Range(1, math.MaxUint32).Draw(t, "player-id")}
	for len(ps) < players {
		ps = append(ps, uint32(flipBit(uint64(ps[len(ps)-1]), rapid.IntRange(0, 31).Draw(t, "player-bit"), 32, func(v uint64) bool {
			return v == 0 || slices.Contains(ps, uint32(v))
		})))
	}
	// Match ids count up with time, as the world rules read them (a
	// player's matches in id order), in pairs that differ in one bit:
	// match 2j is base + j x 2^40 and match 2j+1 sets one bit below 40 that
	// match 2j has clear, staying below match 2j+2. base has 39 random
	// bits, so about 20 are clear; 1200 matches stay below 2^50.
	base := rapid.Uint64().Draw(t, "match-id") >> 25
	ms := make([]uint64, 0, matches)
	for k := range matches {
		if k%2 == 0 {
			ms = append(ms, base+uint64(k/2)<<40)
			continue
		}
		prev := ms[k-1]
		var clear []int
		for b := range 40 {
			if prev&(1<<b) == 0 {
				clear = append(clear, b)
			}
		}
		if len(clear) == 0 { // base was all ones below bit 39
			ms = append(ms, prev+1<<39)
			continue
		}
		ms = append(ms, prev|1<<clear[rapid.IntRange(0, len(clear)-1).Draw(t, "match-bit")])
	}
	return ps, ms
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
