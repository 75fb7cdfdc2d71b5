package lootfaults

import (
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/engine"
)

// Generated schedules: every session opens at a multiple of sessionEvery,
// starts claiming a tick later, takes claims for claimWindow and is
// settled by the scheduler at its deadline. Times sit on a grid of ticks
// (100ms) so that claims in one second (a DATETIME tie) and at one
// instant (a concurrent group) are both common.
const (
	tick = 100 * time.Millisecond
	// claimWindow is 10s: source 004 suggests 15 to 60; shorter keeps a
	// schedule's span small, and nothing here depends on its length but
	// the families' offsets (the session steps), all within a few
	// seconds of a deadline.
	claimWindow = 10 * time.Second
	// sessionEvery is 2 claim windows: a team's next drop comes after the
	// previous one's deadline, so two sessions' requests interleave only
	// around a deadline.
	sessionEvery = 2 * claimWindow
	// retryAfter is the sender's: well inside a claim window, as a client
	// or gateway retries.
	retryAfter = 250 * time.Millisecond
	// maxAttempts bounds sends per request: a request has at most 6
	// planned copies (the duplicate-claim family), plus 3 faults each
	// costing a retry, plus room for a design's own transient nacks: 16.
	maxAttempts = 16
	// farPause outlasts every lease and lock ttl a design takes (the
	// reference's 30s settle lease, source 004's 10s lock), nearPause only
	// the lock's; compensation's grant lease is the settle lease.
	farPause  = 35 * time.Second
	nearPause = 15 * time.Second
	// maxSkew is the largest clock offset clock-skew draws: a few seconds,
	// enough to put a node's judgement of a deadline on the other side of
	// claims and triggers near it.
	maxSkew = 3 * time.Second
)

// preset is what a family switches on; families combine by OR.
type preset struct {
	duplicate, concurrentSettle, early, late, lockExpiry, skew bool
	crash, storeError, timeout, cancel, outsider, ties         bool
	quantity, compensation                                     bool
	sharedLoot, teamChange, fairChange                         bool
	intentChange                                               bool
}

// presetOf returns the preset of a family, or of a Join of families; the
// steps each flag switches on (genSteps, sessionSteps) say what they add
// and why their numbers are what they are.
func presetOf(f engine.Family) preset {
	if err := checkFamily(f); err != nil {
		panic("lootfaults: " + err.Error())
	}
	var p preset
	for _, part := range f.Parts() {
		switch part {
		case Families.DuplicateClaim:
			p.duplicate = true
		case Families.ConcurrentSettle:
			p.concurrentSettle = true
		case Families.EarlySettle:
			p.early = true
		case Families.LateClaim:
			p.late = true
		case Families.LockExpiry:
			p.lockExpiry = true
		case Families.ClockSkew:
			p.skew = true
		case Families.Crash:
			p.crash = true
		case Families.StoreError:
			p.storeError = true
		case Families.TimeoutSuccess:
			p.timeout = true
		case Families.CancelRace:
			p.cancel = true
		case Families.Outsider:
			p.outsider = true
		case Families.Ties:
			p.ties = true
		case Families.Quantity:
			p.quantity = true
		case Families.CompensationRace:
			p.compensation = true
		case Families.SharedLoot:
			p.sharedLoot = true
		case Families.TeamChange:
			p.teamChange = true
		case Families.FairChange:
			p.fairChange = true
		case Families.IntentChange:
			p.intentChange = true
		}
	}
	return p
}

// faulty reports whether the preset injects faults (then nothing runs
// concurrently: a concurrent group's attempt numbers are not fixed).
func (p preset) faulty() bool {
	return p.crash || p.storeError || p.timeout || p.lockExpiry || p.compensation
}

// interleaves is whether the schedules of p may hold requests at one
// instant on several nodes, interleaved by Switches: Generate sets
// Concurrent for these (for duplicate-claim, when it draws the burst).
func (p preset) interleaves() bool {
	return p.concurrentSettle || p.ties || (!p.faulty() && (p.cancel || p.duplicate))
}

// Interleaves reports whether family f's schedules may interleave requests
// that arrive at one instant on several nodes (Frame.Concurrent): what a
// design does there depends on the scheduling choices as well as on the
// requests, so its rarest failures need more runs to show.
func Interleaves(f engine.Family) bool { return presetOf(f).interleaves() }

// genFamily returns a rapid generator of schedules of family f (a family of
// Families or a Join of them): 1..2 sessions of a team of 3..4, each
// opened, started, claimed by some members, and settled at its deadline,
// with the family's features. Schedules shrink toward fewer sessions,
// claims and faults, NEED claims and no wins. genFamily panics on an unknown
// family.
func genFamily(f engine.Family) *rapid.Generator[Schedule] {
	p := presetOf(f)
	return rapid.Custom(func(t *rapid.T) Schedule { return genSchedule(t, f, p) })
}

// generate returns the schedule of family f that seed selects: the same
// (f, seed) gives the same schedule as long as the generator code is the
// same. Commit a failing schedule's text, not its seed.
func generate(f engine.Family, seed uint64) Schedule {
	return genFamily(f).Example(int(seed))
}

// planned is a delivery before the requests are numbered.
type planned struct {
	at   time.Duration
	req  int
	node int
}

// gen is one schedule while the steps draw it.
type gen struct {
	t       *rapid.T
	p       preset
	s       Schedule
	plan    []planned // deliveries in the order planned, until the deliveries step sorts them
	settles []int     // per session: its settle request
	// burst is duplicate-claim's draw of 20 identical claims at once
	// (drawBurst, burst).
	burst  bool
	faults []engine.Fault // the faults as drawn, until canonicalFaults
}

// draw draws an int in lo..hi (rapid shrinks it toward lo).
func (g *gen) draw(lo, hi int, label string) int { return rapid.IntRange(lo, hi).Draw(g.t, label) }

// node draws the node a request is delivered to.
func (g *gen) node() int { return g.draw(0, g.s.Nodes-1, "node") }

// add adds request r, delivered at at to node, and returns its ID.
func (g *gen) add(r Request, at time.Duration, node int) int {
	r.ID = len(g.s.Requests)
	g.s.Requests = append(g.s.Requests, r)
	g.plan = append(g.plan, planned{at, r.ID, node})
	return r.ID
}

// genStep is one feature's part of a schedule: run adds it when on says
// the preset has it (nil: every family).
type genStep struct {
	on  func(p preset) bool
	run func(g *gen)
}

// genSteps are the generator's steps in the order they draw; sessions runs
// sessionSteps for each session. A step's draws come after every draw of
// the steps above it, so moving a step, or adding or dropping a draw in
// one, changes every schedule of the families that run it (the faults
// package's TestGeneratorsArePinned fails, and the committed results/
// would change with it). Each step's comment says what it adds and why its
// numbers are what they are.
var genSteps = []genStep{
	{func(p preset) bool { return p.concurrentSettle }, (*gen).nodes},
	{nil, (*gen).team},
	{func(p preset) bool { return p.skew }, (*gen).skews},
	{func(p preset) bool { return p.duplicate && !p.faulty() }, (*gen).drawBurst},
	{nil, (*gen).sessions},
	{func(p preset) bool { return p.duplicate && !p.faulty() }, (*gen).burstClaims},
	{func(p preset) bool { return p.concurrentSettle || p.ties || (p.cancel && !p.faulty()) }, (*gen).concurrent},
	{nil, (*gen).deliveries},
	{func(p preset) bool { return p.crash }, (*gen).crashes},
	{func(p preset) bool { return p.storeError }, (*gen).storeErrors},
	{func(p preset) bool { return p.timeout }, (*gen).timeouts},
	{func(p preset) bool { return p.late && !p.faulty() }, (*gen).stalledClaim},
	{func(p preset) bool { return p.lockExpiry || p.compensation }, (*gen).stalledSettler},
	{func(p preset) bool { return p.crash }, (*gen).recoverCrashes},
	{nil, (*gen).canonicalFaults},
	{func(p preset) bool { return p.crash || p.storeError || p.timeout }, (*gen).sender},
	{nil, (*gen).switches},
	{func(p preset) bool { return p.fairChange }, (*gen).countWins},
	{func(p preset) bool { return p.storeError }, (*gen).outage},
	{func(p preset) bool { return p.crash || p.storeError || p.timeout }, (*gen).cancelFault},
}

// run runs the steps of steps the preset has, in order.
func (g *gen) run(steps []genStep) {
	for _, st := range steps {
		if st.on == nil || st.on(g.p) {
			st.run(g)
		}
	}
}

// genSchedule draws one schedule: every step of genSteps the preset has,
// in order.
func genSchedule(t *rapid.T, f engine.Family, p preset) Schedule {
	g := &gen{t: t, p: p, s: Schedule{Frame: engine.Frame{Family: f, Nodes: 2, RetryAfter: retryAfter, MaxAttempts: maxAttempts}}}
	g.run(genSteps)
	return g.s
}
