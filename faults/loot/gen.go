package lootfaults

import (
	"cmp"
	"slices"
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
	// the families' offsets below, all within a few seconds of a deadline.
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
}

func presetOf(f engine.Family) preset {
	if err := checkFamily(f); err != nil {
		panic("lootfaults: " + err.Error())
	}
	var p preset
	for _, part := range f.Parts() {
		switch part {
		case DuplicateClaim:
			p.duplicate = true
		case ConcurrentSettle:
			p.concurrentSettle = true
		case EarlySettle:
			p.early = true
		case LateClaim:
			p.late = true
		case LockExpiry:
			p.lockExpiry = true
		case ClockSkew:
			p.skew = true
		case Crash:
			p.crash = true
		case StoreError:
			p.storeError = true
		case TimeoutSuccess:
			p.timeout = true
		case CancelRace:
			p.cancel = true
		case Outsider:
			p.outsider = true
		case Ties:
			p.ties = true
		case Quantity:
			p.quantity = true
		case CompensationRace:
			p.compensation = true
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

// Gen returns a rapid generator of schedules of family f (a family of
// Families or a Join of them): 1..2 sessions of a team of 3..4, each
// opened, started, claimed by some members, and settled at its deadline,
// with the family's features. Schedules shrink toward fewer sessions,
// claims and faults, NEED claims and no wins. Gen panics on an unknown
// family.
func Gen(f engine.Family) *rapid.Generator[Schedule] {
	p := presetOf(f)
	return rapid.Custom(func(t *rapid.T) Schedule { return genSchedule(t, f, p) })
}

// generate returns the schedule of family f that seed selects: the same
// (f, seed) gives the same schedule as long as the generator code is the
// same. Commit a failing schedule's text, not its seed.
func generate(f engine.Family, seed uint64) Schedule {
	return Gen(f).Example(int(seed))
}

// planned is a delivery before the requests are numbered.
type planned struct {
	at   time.Duration
	req  int
	node int
}

func genSchedule(t *rapid.T, f engine.Family, p preset) Schedule {
	s := Schedule{Frame: engine.Frame{Family: f, Nodes: 2, RetryAfter: retryAfter, MaxAttempts: maxAttempts}}
	// 2 nodes: a trigger and a retry can land on another node; 3 when
	// several nodes trigger at once.
	if p.concurrentSettle {
		s.Nodes = rapid.IntRange(2, 3).Draw(t, "nodes")
	}
	members := rapid.IntRange(3, 4).Draw(t, "members")
	for m := 1; m <= members; m++ {
		s.Team = append(s.Team, PlayerID(m))
		// 0..2 wins, 0 where rapid shrinks to; all 0 for ties, so claims
		// of one intent compare by time alone.
		if w := rapid.IntRange(0, 2).Draw(t, "wins"); w > 0 && !p.ties {
			s.Fairness = append(s.Fairness, Fair{PlayerID(m), int64(w)})
		}
	}
	if p.skew {
		// Offsets of -3..3 s, at least one node off: a node's scheduler
		// triggers by its own clock, and claims near the deadline meet a
		// node that judges the deadline by its clock.
		offs := []time.Duration{0, -time.Second, time.Second, -maxSkew, maxSkew}
		s.Skews = make([]time.Duration, s.Nodes)
		for n := range s.Skews {
			s.Skews[n] = offs[rapid.IntRange(0, len(offs)-1).Draw(t, "skew")]
		}
		if !slices.ContainsFunc(s.Skews, func(d time.Duration) bool { return d != 0 }) {
			s.Skews[rapid.IntRange(0, s.Nodes-1).Draw(t, "skewed-node")] = offs[1+rapid.IntRange(0, len(offs)-2).Draw(t, "skew")]
		}
	}
	var plan []planned
	add := func(r Request, at time.Duration, node int) int {
		r.ID = len(s.Requests)
		s.Requests = append(s.Requests, r)
		plan = append(plan, planned{at, r.ID, node})
		return r.ID
	}
	var settles []int // per session: its settle request
	burst := p.duplicate && !p.faulty() && rapid.IntRange(0, 2).Draw(t, "burst") == 2
	sessions := rapid.IntRange(1, 2).Draw(t, "sessions")
	for x := range sessions {
		open := time.Duration(x) * sessionEvery
		sess := Session{ID: x, Quantity: 1, Deadline: open + claimWindow}
		if p.quantity {
			sess.Quantity = rapid.IntRange(2, 3).Draw(t, "quantity")
		}
		s.Sessions = append(s.Sessions, sess)
		node := func() int { return rapid.IntRange(0, s.Nodes-1).Draw(t, "node") }
		add(Request{Kind: OpenSession, Session: x}, open, node())
		add(Request{Kind: StartClaims, Session: x}, open+tick/2, node())
		// Claims: members 1..claimers claim, member m in second m of the
		// session (0..0.9s into it): claims that could tie never share a
		// second outside ties (RuleSeconds). ties: 2..3 NEED claims in
		// one second, or at one instant.
		minClaimers := 1
		if p.ties {
			minClaimers = 2 // a tie needs two
		}
		claimers := rapid.IntRange(minClaimers, members).Draw(t, "claimers")
		intents := []Intent{Need, Greed, Pass}
		// A tie starts 0..2 ticks into a whole second, so its later claims
		// (up to 7 ticks on) stay in that second.
		tieAt := open + time.Duration(rapid.IntRange(1, 8).Draw(t, "tie-second"))*time.Second + time.Duration(rapid.IntRange(0, 2).Draw(t, "tie-in"))*tick
		for m := 1; m <= claimers; m++ {
			in := intents[rapid.IntRange(0, 2).Draw(t, "intent")]
			at := open + time.Duration(m)*time.Second + time.Duration(rapid.IntRange(0, 9).Draw(t, "claim-at"))*tick
			switch {
			case p.ties && m <= 3:
				// The same instant (0, where rapid shrinks to), or the same
				// second, 0.3s or 0.7s later.
				in = Need
				at = tieAt + []time.Duration{0, 3 * tick, 7 * tick}[rapid.IntRange(0, 2).Draw(t, "tie-by")]
			case p.late && m == 1:
				// Just before, at, or just after the deadline.
				by := []time.Duration{0, -time.Millisecond, time.Millisecond, -tick, tick, -time.Second / 2}
				at = sess.Deadline + by[rapid.IntRange(0, len(by)-1).Draw(t, "late-by")]
			case p.late && m == 2:
				// A second later: refused by every clock that agrees with
				// the database's.
				at = sess.Deadline + time.Second + []time.Duration{0, time.Millisecond, tick}[rapid.IntRange(0, 2).Draw(t, "later-by")]
			case p.skew && m <= 2:
				// Two NEED claims in the two seconds before the deadline,
				// on two nodes (below): a node that stamps claims with its
				// own clock can rank the later one first.
				in = Need
				at = sess.Deadline - time.Duration(3-m)*time.Second + time.Duration(rapid.IntRange(0, 9).Draw(t, "skew-by"))*tick
			}
			nd := node()
			if p.skew && m <= 2 {
				nd = (m - 1) % s.Nodes
			}
			id := add(Request{Kind: ClaimItem, Session: x, Player: PlayerID(m), Intent: in}, at, nd)
			if p.duplicate && rapid.IntRange(0, 1).Draw(t, "duplicated") == 1 {
				// A double click (1ms), a client retry (RetryAfter), a
				// gateway resend to another node (1s).
				gaps := []time.Duration{time.Millisecond, retryAfter, time.Second}
				g := gaps[rapid.IntRange(0, len(gaps)-1).Draw(t, "dup-gap")]
				nd := plan[len(plan)-1].node
				if g == time.Second {
					nd = (nd + 1) % s.Nodes
				}
				plan = append(plan, planned{at + g, id, nd})
			}
		}
		if p.outsider {
			// 1..2 outsiders, in seconds 5 and 6 (after every member's).
			for k := range rapid.IntRange(1, 2).Draw(t, "outsiders") {
				pl := PlayerID(members + 1 + k)
				at := open + time.Duration(5+k)*time.Second + time.Duration(rapid.IntRange(0, 9).Draw(t, "outsider-at"))*tick
				add(Request{Kind: ClaimItem, Session: x, Player: pl, Intent: intents[rapid.IntRange(0, 1).Draw(t, "intent")]}, at, node())
			}
		}
		// The scheduler's trigger at the deadline; with skewed clocks each
		// node's scheduler fires when its own clock reads the deadline.
		settle := add(Request{Kind: SettleNow, Session: x}, sess.Deadline, node())
		settles = append(settles, settle)
		if p.skew {
			plan = plan[:len(plan)-1]
			for n := range s.Nodes {
				plan = append(plan, planned{sess.Deadline - s.Skew(n), settle, n})
			}
		}
		if p.concurrentSettle {
			for n := 1; n < s.Nodes; n++ {
				plan = append(plan, planned{sess.Deadline, settle, (plan[len(plan)-1].node + 1) % s.Nodes})
			}
		}
		if p.early {
			for range rapid.IntRange(1, 2).Draw(t, "early") {
				at := open + time.Duration(rapid.IntRange(20, 99).Draw(t, "early-at"))*tick
				plan = append(plan, planned{at, settle, node()})
			}
		}
		if p.cancel {
			// Half the time at the settle's instant (where rapid shrinks
			// to: the two interleave), else just before or after it.
			var by time.Duration
			if rapid.IntRange(0, 1).Draw(t, "cancel-races") == 1 {
				offs := []time.Duration{-time.Second, -time.Millisecond, time.Millisecond, tick, time.Second}
				by = offs[rapid.IntRange(0, len(offs)-1).Draw(t, "cancel-by")]
			}
			add(Request{Kind: CancelSession, Session: x}, sess.Deadline+by, node())
		}
		if p.crash || p.storeError || p.timeout || p.compensation {
			// The compensation job's tick, after the settle; in
			// compensation-race also during the settler's stall.
			add(Request{Kind: Compensate, Session: -1}, sess.Deadline+3*time.Second, node())
		}
	}
	if burst {
		// 20 identical claims at once (source 004's concurrency test),
		// over every node, interleaved by the switches.
		var claims []int
		for _, r := range s.Requests {
			if r.Kind == ClaimItem {
				claims = append(claims, r.ID)
			}
		}
		id := claims[rapid.IntRange(0, len(claims)-1).Draw(t, "burst-claim")]
		at := plan[slices.IndexFunc(plan, func(d planned) bool { return d.req == id })].at
		for k := range 19 {
			plan = append(plan, planned{at, id, k % s.Nodes})
		}
		s.Concurrent = true
	}
	if p.concurrentSettle || p.ties || (p.cancel && !p.faulty()) {
		s.Concurrent = true // and burst above: interleaves()
	}
	// Stable: equal times keep the order planned.
	slices.SortStableFunc(plan, func(a, b planned) int { return cmp.Compare(a.at, b.at) })
	for _, d := range plan {
		s.Deliveries = append(s.Deliveries, engine.Delivery{At: d.at, Msg: d.req, Node: d.node})
	}
	s.Faults = genFaults(t, &s, p, settles)
	if s.Concurrent {
		// The interleaving: up to 48 choices of 0..2 (at most 3 goroutines
		// per group), shrinking toward the sequential order.
		if sw := rapid.SliceOfN(rapid.IntRange(0, 2), 0, 48).Draw(t, "switches"); len(sw) > 0 {
			s.Switches = sw
		}
	}
	return s
}

// genFaults draws the faults of the fault families, each on the attempt
// that carries one planned delivery (engine.Fault.OnDelivery), whatever
// retries come before it.
func genFaults(t *rapid.T, s *Schedule, p preset, settles []int) []engine.Fault {
	var fs []engine.Fault
	deliveryOf := func(req int) int {
		var at []int
		for i, d := range s.Deliveries {
			if d.Msg == req {
				at = append(at, i)
			}
		}
		return at[rapid.IntRange(0, len(at)-1).Draw(t, "attempt-of")]
	}
	// A fault lands on a settle (half the time: it has the most calls), a
	// claim or the compensation job's tick; effects 0..7 cover a settle's
	// calls (the lock, the CAS, the record, a delivery and its mark per
	// item, the unlock), a claim's one or two, compensation's lease and
	// deliveries.
	kindOf := []Kind{SettleNow, SettleNow, ClaimItem, Compensate}
	draw := func(label string, kinds ...engine.FaultKind) {
		for range rapid.IntRange(1, 3).Draw(t, label) {
			k := kindOf[rapid.IntRange(0, len(kindOf)-1).Draw(t, "fault-on")]
			var reqs []int
			for _, r := range s.Requests {
				if r.Kind == k {
					reqs = append(reqs, r.ID)
				}
			}
			if len(reqs) == 0 {
				continue
			}
			fs = append(fs, engine.Fault{
				Attempt:    deliveryOf(reqs[rapid.IntRange(0, len(reqs)-1).Draw(t, "fault-request")]),
				Effect:     rapid.IntRange(0, 7).Draw(t, "effect"),
				Kind:       kinds[rapid.IntRange(0, len(kinds)-1).Draw(t, "kind")],
				OnDelivery: true,
			})
		}
	}
	if p.crash {
		draw("crashes", engine.CrashBefore, engine.CrashAfter)
	}
	if p.storeError {
		draw("failures", engine.FailBefore)
	}
	if p.timeout {
		draw("timeouts", engine.TimeoutAfter)
	}
	if p.late && !p.faulty() && !s.Concurrent && rapid.IntRange(0, 1).Draw(t, "stalled-claim") == 1 {
		// A claim handler stalls for 2 ticks between its first and second
		// call, a tick before the deadline: a claim judged in one call and
		// written in another is written after the settle at the deadline.
		claim := Request{Kind: ClaimItem, Session: 0, Player: 1, Intent: Need}
		for _, r := range s.Requests {
			if r.Kind == ClaimItem && r.Session == 0 {
				claim = r
				break
			}
		}
		a := insertDelivery(s, fs, engine.Delivery{At: s.Sessions[0].Deadline - tick, Msg: claim.ID, Node: 0})
		fs = append(fs, engine.Fault{Attempt: a, Effect: 1, Kind: engine.Pause, For: 2 * tick, OnDelivery: true})
	}
	if p.lockExpiry || p.compensation {
		// The settler of one session stalls, for longer than the lock's
		// ttl or every lease: lock-expiry anywhere in its settle up to its
		// unlock (effects 0..8: before the CAS, the record, a delivery, the
		// unlock's second call), compensation-race between its record and
		// its deliveries (effects 3..7); another node is triggered, or
		// compensation runs, while it sleeps.
		x := rapid.IntRange(0, len(settles)-1).Draw(t, "stalled-session")
		a := deliveryOf(settles[x])
		lo, hi := 0, 8
		if p.compensation {
			lo, hi = 3, 7
		}
		pause := []time.Duration{farPause, nearPause}[rapid.IntRange(0, 1).Draw(t, "pause")]
		fs = append(fs, engine.Fault{Attempt: a, Effect: rapid.IntRange(lo, hi).Draw(t, "pause-effect"), Kind: engine.Pause, For: pause, OnDelivery: true})
		start := s.Deliveries[a].At
		other := (s.Deliveries[a].Node + 1) % s.Nodes
		if p.lockExpiry {
			// A second trigger after the stalled settler's lock expired;
			// half the time it stalls 2s itself right after taking the
			// lock, so the first settler wakes while it holds it (a
			// release that deletes by key alone deletes the second's).
			b := insertDelivery(s, fs, engine.Delivery{At: start + pause - time.Second, Msg: settles[x], Node: other})
			if rapid.IntRange(0, 1).Draw(t, "second-stalls") == 1 {
				fs = append(fs, engine.Fault{Attempt: b, Effect: 1, Kind: engine.Pause, For: 2 * time.Second, OnDelivery: true})
			}
		}
		if p.compensation {
			comp := slices.IndexFunc(s.Requests, func(r Request) bool { return r.Kind == Compensate })
			insertDelivery(s, fs, engine.Delivery{At: start + pause - time.Second, Msg: comp, Node: other})
		}
	}
	if p.crash {
		// 0..1 crash inside Recover: of the first 3 recovery calls, at its
		// effect 0..7.
		for range rapid.IntRange(0, 1).Draw(t, "recover-crashes") {
			fs = append(fs, engine.Fault{
				Attempt: engine.Recovery(rapid.IntRange(0, 2).Draw(t, "recovery")),
				Effect:  rapid.IntRange(0, 7).Draw(t, "effect"),
				Kind:    []engine.FaultKind{engine.CrashBefore, engine.CrashAfter}[rapid.IntRange(0, 1).Draw(t, "kind")],
			})
		}
	}
	// Canonical order; of two faults at one point the first drawn wins.
	slices.SortStableFunc(fs, func(a, b engine.Fault) int {
		switch {
		case a.Before(b):
			return -1
		case b.Before(a):
			return 1
		}
		return 0
	})
	fs = slices.CompactFunc(fs, func(a, b engine.Fault) bool { return !a.Before(b) && !b.Before(a) })
	if len(fs) == 0 {
		return nil
	}
	if p.crash || p.storeError || p.timeout {
		// The sender: fast (0, where rapid shrinks to), slow (a minute:
		// past every lease), or giving up after one send, so that only
		// Recover finishes.
		switch rapid.IntRange(0, 2).Draw(t, "sender") {
		case 1:
			s.RetryAfter = time.Minute
		case 2:
			s.MaxAttempts, s.GiveUp = 1, true
		}
	}
	return fs
}

// insertDelivery inserts d into s after every delivery at or before its
// time, moves the faults drawn on later deliveries along, and returns its
// index.
func insertDelivery(s *Schedule, fs []engine.Fault, d engine.Delivery) int {
	i, _ := slices.BinarySearchFunc(s.Deliveries, d.At, func(e engine.Delivery, at time.Duration) int {
		if e.At <= at {
			return -1
		}
		return 1
	})
	s.Deliveries = slices.Insert(s.Deliveries, i, d)
	for k := range fs {
		if fs[k].OnDelivery && fs[k].Attempt >= i {
			fs[k].Attempt++
		}
	}
	return i
}
