package faults

import (
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/engine"
)

// Generated schedules live on a grid of ticks. A player's match k starts at
// k*MatchEvery (plus the player's offset); its instant settlement is sent at
// +2 ticks (the player leaves), its final at +4 (the match ends), its third
// at +5. Eight ticks per match leave room to place a late arrival between
// the next match's start (+8) and its instant (+10), and an interleaved one
// after that instant. Changing tick changes every placement the steps make
// (gen_*.go).
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
//     settlements of its player. Duplicate (see its duplicates step).
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
	inNode      bool // in-node: same-instant copies and siblings on one node
	rewind      bool // the sender's seq restarts once per player
	nodeFailure bool // multi-node: FailBefore at effect 0 so retries move node
	roomReturn  bool // room-return: one forced return within two matches, colliding net
	wide        bool // wide-ids: a team shares matches; wide ids in one-bit pairs
	long        bool // long-history: a thousand matches, replays from far back
	deep        bool // long-history's deep schedule: deepMatchesOf, replays of the first match
	sender      bool // crash, store-error, timeout: draw a fast, slow or giving-up sender
	pause       bool // pause: 2..3 nodes, one call frozen mid-way, a late copy elsewhere
	returnGap   int  // MinReturnGap of the family
	rooms       int  // roomsFor(returnGap)
}

// presetOf returns the preset of a family, or of a Join of families. Each
// family's comment says what it does and which steps (genSteps) add it;
// the numbers drawn are derived where the step draws them.
func presetOf(f Family) preset {
	// Base for every family: 1..3 players (3 is enough for players to share
	// rooms and for per-player state to be tested against another player's
	// identical fields), 1..5 matches each (5 matches span 2.5 times any
	// per-player state of two adjacent matches, so such state must evict;
	// 3x5x2 = 30 first arrivals keeps a schedule near 50 deliveries with
	// the copies the arrival steps add).
	if err := checkFamily(f); err != nil {
		panic("faults: " + err.Error())
	}
	p := preset{maxPlayers: 3, minMatches: 1, maxMatches: 5}
	for _, part := range f.Parts() {
		switch part {
		case Families.Clean:
			// Every settlement once, in order: the baseline every design
			// must hold; a failure here is a plain bug.
		case Families.Duplicate:
			// Extra copies close together, or two matches on: the
			// duplicates step.
			p.duplicate = true
		case Families.Late:
			// A settlement arrives after the player's next match started
			// (the lateArrivals step), and the player moved to another
			// room: every next match in another room (roomsFor keeps a
			// room open); at least 2 matches so a next match exists.
			p.late = true
			p.alwaysMove = true
			p.minMatches = max(p.minMatches, 2)
		case Families.DeepReplay:
			// A queue replays a block of settlements past every window:
			// the deepReplays step.
			p.deepReplay = true
		case Families.Interleave:
			// The old match's final after the new match's instant (the
			// interleavedFinals step): at least 2 matches so a new match
			// exists.
			p.interleave = true
			p.minMatches = max(p.minMatches, 2)
		case Families.WindowExpiry:
			// Copies just as the window forgets: the expiryCopies step.
			p.expiry = true
		case Families.Crash:
			// Crashes at any effect (the crashes step) and inside Recover
			// (recoverCrashes), with a drawn sender (the sender step).
			p.sender = true
			p.crash = true
		case Families.StoreError:
			// Transient refusals (the storeErrors step), a drawn sender.
			p.sender = true
			p.storeError = true
		case Families.TimeoutSuccess:
			// Effects the caller is told timed out (the timeouts step), a
			// drawn sender.
			p.sender = true
			p.timeout = true
		case Families.MultiNode:
			// A cluster (the nodes step), first arrivals on random nodes
			// (firstArrivals), close copies on another node
			// (otherNodeCopies) and failures that move the sender's retry
			// to the next node (nodeFailures).
			p.multiNode = true
			p.nodeFailure = true
		case Families.Concurrent:
			// Identical copies of every first arrival at one instant on
			// distinct nodes (the nodes and firstArrivals steps),
			// interleaved at every env call as Switches says (the
			// switches step). No faults: CheckFamily refuses the joins.
			p.concurrent = true
		case Families.SequenceRewind:
			// Each player's seq restarts at 1 from one match on (the sender
			// restarted and lost its counter; the plan step draws the
			// match): 2..5 matches so a rewind point exists.
			p.rewind = true
			p.minMatches = max(p.minMatches, 2)
		case Families.ThirdKind:
			// Three settlements per match (instant, final, third; the
			// playMatch step): 6 per two adjacent matches, where the
			// business promised 4.
			p.third = true
		case Families.SmallScope:
			// Not a preset: genFamily samples Enumerate(DefaultScope) instead.
		case Families.Pause:
			// A cluster (the nodes step), first arrivals on random nodes
			// (firstArrivals), and one planned delivery's call frozen
			// mid-way with a late copy on another node (the pauses step,
			// which derives its numbers).
			p.pause = true
		case Families.WideIDs:
			// 2..3 players (a team; 2 is the smallest pair that shares a
			// match) playing the same matches in the same rooms. Player ids
			// and match ids are drawn full width, each next one differing
			// from an earlier one in one bit, at any of the field's
			// positions: a key that drops the player collides on every
			// shared match, one that keeps b bits of an id collides
			// whenever a flipped bit is above them, and over a cell every
			// position is flipped somewhere (the drawWideIDs step).
			p.wide = true
			p.maxPlayers = 3
		case Families.LongHistory:
			// One player, 1000..1200 matches (2000+ settlements, 400+ ttl
			// spans of the window), replays from far back (the farReplays
			// step), and close duplicates. A run is about 40 times a plain
			// family's: the matrix still runs it in seconds.
			p.long = true
			p.duplicate = true
			p.minMatches, p.maxMatches = max(p.minMatches, 1000), 1200
		case Families.RoomReturn:
			// One player returns, once, to the room of the match before
			// the previous one (k-2 -> k-1 elsewhere -> k), both entries at
			// round 1 and the returning match's instant paying what k-2's
			// paid: the same (room, round, net, final) two matches apart
			// (drawReturnPlayer, plan and enterRoom draw it). 3..5
			// matches so the pattern fits. Other moves may return right
			// away too (MinReturnGap is 1 here).
			p.roomReturn = true
			p.minMatches = max(p.minMatches, 3)
		case Families.InNode:
			// Same-instant calls on one node (the inNodeBursts step).
			p.inNode = true
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

// genFamily returns a rapid generator of schedules of family f (a family of
// Families or a Join of them). Schedules are small (about 10..60
// deliveries) and shrink toward fewer players, matches, copies and faults,
// and toward equal nets. genFamily panics on an unknown family.
func genFamily(f Family) *rapid.Generator[Schedule] {
	if f == Families.SmallScope {
		return rapid.SampledFrom(smallScope())
	}
	p := presetOf(f)
	return rapid.Custom(func(t *rapid.T) Schedule { return genSchedule(t, f, p, nil) })
}

// generate returns the schedule of family f that seed selects: the same
// (f, seed) gives the same schedule as long as the generator code is the
// same. Commit a failing schedule's text, not its seed.
func generate(f Family, seed uint64) Schedule {
	if isDeep(f, seed) {
		return generateDeep(f, seed)
	}
	return genFamily(f).Example(int(seed))
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

// gen is one schedule while the steps draw it.
type gen struct {
	t *rapid.T
	p preset
	s Schedule
	// all is every settlement with its generation facts: in generation
	// order (player by player, match by match) until the ids step sorts
	// it into ID order.
	all []pending
	// players is how many players play; returnPlayer is room-return's
	// player who makes the forced return (-1: none).
	players, returnPlayer int
	// team is, in wide-ids, player 0's matches: the team plays them, at
	// its times, in its rooms.
	team struct {
		matches int
		offset  time.Duration
		rooms   []uint32
	}
	// widePlayers and wideMatches are wide-ids' full-width identities,
	// by player and by match index.
	widePlayers []uint32
	wideMatches []uint64
	dels        []engine.Delivery // planned arrivals, first arrivals first
	faults      []engine.Fault    // faults on attempts among dels, as drawn
}

// draw draws an int in lo..hi (rapid shrinks it toward lo).
func (g *gen) draw(lo, hi int, label string) int { return rapid.IntRange(lo, hi).Draw(g.t, label) }

// genStep is one feature's part of a schedule: run adds it when on says
// the preset has it (nil: every family).
type genStep struct {
	on  func(p preset) bool
	run func(g *gen)
}

// genSteps are the generator's steps in the order they draw. A step's
// draws come after every draw of the steps above it, so moving a step, or
// adding or dropping a draw in one, changes every schedule of the families
// that run it (TestGeneratorsArePinned fails, and the committed results/
// would change with it): a new feature's step goes last, as the
// concurrent switches and the sender did. Each step's comment says what it
// adds and why its numbers are what they are.
var genSteps = []genStep{
	{func(p preset) bool { return p.multiNode || p.concurrent || p.pause }, (*gen).nodes},
	{nil, (*gen).drawPlayers},
	{func(p preset) bool { return p.roomReturn }, (*gen).drawReturnPlayer},
	{nil, (*gen).matches},
	{func(p preset) bool { return p.late }, (*gen).lateArrivals},
	{func(p preset) bool { return p.interleave }, (*gen).interleavedFinals},
	{nil, (*gen).sortByBirth},
	{func(p preset) bool { return p.wide }, (*gen).drawWideIDs},
	{nil, (*gen).number},
	{nil, (*gen).firstArrivals},
	{func(p preset) bool { return p.duplicate }, (*gen).duplicates},
	{func(p preset) bool { return p.multiNode }, (*gen).otherNodeCopies},
	{func(p preset) bool { return p.deepReplay }, (*gen).deepReplays},
	{func(p preset) bool { return p.long }, (*gen).farReplays},
	{func(p preset) bool { return p.deep }, (*gen).firstMatchReplays},
	{func(p preset) bool { return p.expiry }, (*gen).expiryCopies},
	{nil, (*gen).sortDeliveries},
	{func(p preset) bool { return p.crash }, (*gen).crashes},
	{func(p preset) bool { return p.storeError }, (*gen).storeErrors},
	{func(p preset) bool { return p.timeout }, (*gen).timeouts},
	{func(p preset) bool { return p.nodeFailure }, (*gen).nodeFailures},
	{nil, (*gen).canonicalFaults},
	{func(p preset) bool { return p.concurrent }, (*gen).switches},
	{func(p preset) bool { return p.sender }, (*gen).sender},
	{func(p preset) bool { return p.crash }, (*gen).recoverCrashes},
	{func(p preset) bool { return p.long }, (*gen).longPlayer},
	{func(p preset) bool { return p.storeError }, (*gen).outage},
	{func(p preset) bool { return p.pause }, (*gen).pauses},
	{func(p preset) bool { return p.inNode }, (*gen).inNodeBursts},
}

// genSchedule draws one schedule: every step of genSteps the preset has,
// in order. If trace is not nil it receives the settlements with their
// generation-time facts (in ID order), for tests.
func genSchedule(t *rapid.T, f Family, p preset, trace *[]pending) Schedule {
	g := &gen{t: t, p: p, s: Schedule{Frame: engine.Frame{Family: f, Nodes: 1, RetryAfter: genRetryAfter, MaxAttempts: genMaxAttempts, Concurrent: p.concurrent}}}
	for _, st := range genSteps {
		if st.on == nil || st.on(p) {
			st.run(g)
		}
	}
	if trace != nil {
		*trace = g.all
	}
	return g.s
}
