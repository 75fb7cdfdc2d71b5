package faults

import (
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The names of what a run can reach.
const (
	reachedCrash         = "crash"            // a node crashed (at an effect, or losing its ack)
	reachedCrashInRecov  = "crash-in-recover" // a node crashed inside Recover
	reachedFail          = "fail"             // an effect failed before it ran
	reachedTimeout       = "timeout"          // an effect ran and reported a timeout
	reachedRecoverCredit = "recover-credit"   // Recover made a credit the ledger applied
	reachedSlowRetry     = "slow-retry"       // a retry came a lease or more after the previous send
	reachedGiveUp        = "give-up"          // the sender gave up on a settlement
	reachedWindowDup     = "memory-dup"       // a duplicate answered with no env call (from memory)
	reachedStoreDup      = "store-dup"        // a duplicate answered after env calls (by the store)
	reachedDup           = "dup"              // a duplicate answered (memory-dup + store-dup: Steady)
	reachedCopy          = "copy"             // a planned copy of a settlement arrived (not a retry)
	reachedFarCopy       = "far-copy"         // a planned copy arrived WindowTTL or more after the first arrival
	reachedOtherNode     = "other-node"       // a settlement arrived on two nodes
	reachedOverlap       = "overlap"          // two attempts ran interleaved (the concurrent family)
	reachedNodeOverlap   = "node-overlap"     // an attempt arrived at a node while another of that node was open (in-node)
	reachedOutOfOrder    = "out-of-order"     // a player's settlement arrived after a later one of the player
	reachedSharedMatch   = "shared-match"     // two players' settlements of one match arrived
	reachedThirdKind     = "third-kind"       // a settlement of a third kind arrived
	reachedRewind        = "seq-rewind"       // a player's seq restarted
	reachedQuickReturn   = "quick-return"     // a player re-entered a room within DefaultReturnGap matches
	reachedStateSample   = "state-sample"     // a node reported its state size
	reachedPause         = "pause"            // a node froze in the middle of a call
	reachedOvertaken     = "overtaken"        // a settlement arrived on another node while a call of it was frozen
)

// Reached lists every name Coverage counts, in the order reports show them.
var reachedNames = []string{
	reachedCrash, reachedCrashInRecov, reachedFail, reachedTimeout, reachedRecoverCredit, reachedSlowRetry,
	reachedGiveUp, reachedWindowDup, reachedStoreDup, reachedDup, reachedCopy, reachedFarCopy, reachedOtherNode,
	reachedOverlap, reachedNodeOverlap, reachedOutOfOrder, reachedSharedMatch, reachedThirdKind, reachedRewind,
	reachedQuickReturn, reachedStateSample, reachedPause, reachedOvertaken,
}

// slowRetryGap is how long after the previous send a retry counts as slow:
// 30 s, the leases designs take on a claim (ref's default), so a retry this
// late meets any lease of a crashed node lapsed.
const slowRetryGap = 30 * time.Second

// coverageOf counts what h reached.
func coverageOf(h History) engine.Coverage {
	c := engine.Coverage{}
	s := h.Schedule
	arrivals := make([]int, len(s.Settlements))
	firstAt := make([]time.Duration, len(s.Settlements))
	lastAt := make([]time.Duration, len(s.Settlements))
	nodeOf := make([]int, len(s.Settlements))
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	open := map[int]int{}   // attempt -> env calls so far
	openOn := map[int]int{} // node -> its attempts open
	closeAttempt := func(e engine.Event[Detail]) {
		if _, ok := open[e.Attempt]; ok {
			openOn[e.Node]--
			delete(open, e.Attempt)
		}
	}
	// frozen is, per attempt paused and not yet resumed, its arrival (its
	// settlement and node): the attempt's next event is its resumption.
	frozen := map[int]Event{}
	latestSeq := map[uint32]uint64{}
	matchPlayers := map[uint64]uint32{}
	for _, e := range h.Events {
		if e.Kind != engine.EvPause {
			delete(frozen, e.Attempt)
		}
		switch e.Kind {
		case engine.EvPause:
			c[reachedPause]++
			frozen[e.Attempt] = e
		case engine.EvArrive:
			id := e.Msg
			st := s.Settlements[id]
			for _, p := range frozen {
				if p.Msg == id && p.Node != e.Node {
					c[reachedOvertaken]++
				}
			}
			if len(open) > 0 {
				c[reachedOverlap]++
			}
			if openOn[e.Node] > 0 {
				c[reachedNodeOverlap]++
			}
			open[e.Attempt] = 0
			openOn[e.Node]++
			switch {
			case arrivals[id] == 0:
				firstAt[id] = e.At
				if seq, ok := latestSeq[st.Player]; ok && st.Seq < seq {
					c[reachedOutOfOrder]++
				}
				if p, ok := matchPlayers[st.Match]; ok && p != st.Player {
					c[reachedSharedMatch]++
				}
				matchPlayers[st.Match] = st.Player
				if st.Kind >= KindThird {
					c[reachedThirdKind]++
				}
			default:
				if e.Delivery >= 0 {
					c[reachedCopy]++
					if e.At-firstAt[id] >= WindowTTL {
						c[reachedFarCopy]++
					}
				}
				if e.Delivery < 0 && e.At-lastAt[id] >= slowRetryGap {
					c[reachedSlowRetry]++
				}
				if nodeOf[id] != e.Node {
					c[reachedOtherNode]++
				}
			}
			arrivals[id]++
			lastAt[id] = e.At
			nodeOf[id] = e.Node
			latestSeq[st.Player] = max(latestSeq[st.Player], st.Seq)
		case engine.EvEffect, EvCredit:
			if e.Attempt >= 0 {
				open[e.Attempt]++
			} else if e.Kind == EvCredit && e.Detail.Applied {
				c[reachedRecoverCredit]++
			}
		case engine.EvFault:
			switch e.Fault {
			case engine.FailBefore:
				c[reachedFail]++
			case engine.TimeoutAfter:
				c[reachedTimeout]++
			}
		case engine.EvCrash:
			if e.Attempt < 0 {
				c[reachedCrashInRecov]++
			} else {
				c[reachedCrash]++
				closeAttempt(e)
			}
		case engine.EvAck:
			if e.Ack == AckDuplicate {
				if open[e.Attempt] == 0 {
					c[reachedWindowDup]++
				} else {
					c[reachedStoreDup]++
				}
			}
			closeAttempt(e)
		case engine.EvPanic:
			closeAttempt(e)
		case engine.EvGiveUp:
			c[reachedGiveUp]++
		case EvState:
			c[reachedStateSample]++
		}
	}
	c.Merge(scheduleCoverage(s))
	return c
}

// scheduleCoverage counts what lies in the schedule itself: sequence
// restarts and quick room returns.
func scheduleCoverage(s Schedule) engine.Coverage {
	c := engine.Coverage{}
	for _, ids := range byPlayer(s.Settlements) {
		lastIn := map[uint32]int{}
		matches := 0
		var prev *Settlement
		for _, i := range ids {
			st := &s.Settlements[i]
			if prev == nil || st.Match != prev.Match {
				if prev != nil && st.Seq <= prev.Seq {
					c[reachedRewind]++
				}
				if last, ok := lastIn[st.Room]; ok && prev != nil && st.Room != prev.Room && matches-1-last < DefaultReturnGap {
					c[reachedQuickReturn]++
				}
				if prev != nil && st.Room != prev.Room {
					lastIn[prev.Room] = matches - 1
				}
				matches++
			}
			prev = st
		}
	}
	return c
}

// Steady returns c with the counts that vary between runs of one schedule
// for a design whose runs do (faults.Declaration.Varies: a cache that drops
// what it likes) folded together: which layer answered a duplicate goes,
// how many duplicates were answered stays.
func Steady(c engine.Coverage) engine.Coverage {
	out := engine.Coverage{}
	out.Merge(c)
	if n := out[reachedWindowDup] + out[reachedStoreDup]; n > 0 {
		out[reachedDup] = n
	}
	delete(out, reachedWindowDup)
	delete(out, reachedStoreDup)
	return out
}

// exercises is what each family exists to make happen: a run of the
// family that reached none of it did not test what the family's column
// claims. clean makes nothing happen on purpose; late's lateness is
// relative to match starts, which a schedule does not record (its
// generator places every late arrival, TestGenEveryScheduleHasItsFamilyFeature).
var exercises = map[Family][]string{
	Families.Duplicate:      {reachedCopy},
	Families.DeepReplay:     {reachedFarCopy},
	Families.Interleave:     {reachedOutOfOrder},
	Families.WindowExpiry:   {reachedFarCopy},
	Families.Crash:          {reachedCrash},
	Families.StoreError:     {reachedFail},
	Families.TimeoutSuccess: {reachedTimeout},
	Families.MultiNode:      {reachedOtherNode},
	Families.Concurrent:     {reachedOverlap},
	Families.InNode:         {reachedNodeOverlap},
	Families.SequenceRewind: {reachedRewind},
	Families.ThirdKind:      {reachedThirdKind},
	Families.RoomReturn:     {reachedQuickReturn},
	Families.WideIDs:        {reachedSharedMatch},
	Families.LongHistory:    {reachedFarCopy},
	Families.Pause:          {reachedPause, reachedOvertaken},
}

// exercisesOf is what plain family f exists to make happen (names of
// Reached).
func exercisesOf(f Family) []string { return exercises[f] }
