package faults

import (
	"time"

	"github.com/onceproof/onceproof/engine"
)

// Coverage counts what runs reached, by name (Reached lists the names): how
// deep a "holds" looked. Counts of several runs add up.
type Coverage = engine.Coverage

// The names of what a run can reach.
const (
	ReachedCrash         = "crash"            // a node crashed (at an effect, or losing its ack)
	ReachedCrashInRecov  = "crash-in-recover" // a node crashed inside Recover
	ReachedFail          = "fail"             // an effect failed before it ran
	ReachedTimeout       = "timeout"          // an effect ran and reported a timeout
	ReachedRecoverCredit = "recover-credit"   // Recover made a credit the ledger applied
	ReachedSlowRetry     = "slow-retry"       // a retry came a lease or more after the previous send
	ReachedGiveUp        = "give-up"          // the sender gave up on a settlement
	ReachedWindowDup     = "memory-dup"       // a duplicate answered with no env call (from memory)
	ReachedStoreDup      = "store-dup"        // a duplicate answered after env calls (by the store)
	ReachedDup           = "dup"              // a duplicate answered (memory-dup + store-dup: Steady)
	ReachedCopy          = "copy"             // a planned copy of a settlement arrived (not a retry)
	ReachedFarCopy       = "far-copy"         // a planned copy arrived WindowTTL or more after the first arrival
	ReachedOtherNode     = "other-node"       // a settlement arrived on two nodes
	ReachedOverlap       = "overlap"          // two attempts ran interleaved (the concurrent family)
	ReachedOutOfOrder    = "out-of-order"     // a player's settlement arrived after a later one of the player
	ReachedSharedMatch   = "shared-match"     // two players' settlements of one match arrived
	ReachedThirdKind     = "third-kind"       // a settlement of a third kind arrived
	ReachedRewind        = "seq-rewind"       // a player's seq restarted
	ReachedQuickReturn   = "quick-return"     // a player re-entered a room within DefaultReturnGap matches
	ReachedStateSample   = "state-sample"     // a node reported its state size
)

// Reached lists every name Coverage counts, in the order reports show them.
var reachedNames = []string{
	ReachedCrash, ReachedCrashInRecov, ReachedFail, ReachedTimeout, ReachedRecoverCredit, ReachedSlowRetry,
	ReachedGiveUp, ReachedWindowDup, ReachedStoreDup, ReachedDup, ReachedCopy, ReachedFarCopy, ReachedOtherNode,
	ReachedOverlap, ReachedOutOfOrder, ReachedSharedMatch, ReachedThirdKind, ReachedRewind,
	ReachedQuickReturn, ReachedStateSample,
}

// slowRetryGap is how long after the previous send a retry counts as slow:
// 30 s, the leases designs take on a claim (ref's default), so a retry this
// late meets any lease of a crashed node lapsed.
const slowRetryGap = 30 * time.Second

// coverageOf counts what h reached.
func coverageOf(h History) Coverage {
	c := Coverage{}
	s := h.Schedule
	arrivals := make([]int, len(s.Settlements))
	firstAt := make([]time.Duration, len(s.Settlements))
	lastAt := make([]time.Duration, len(s.Settlements))
	nodeOf := make([]int, len(s.Settlements))
	for i := range nodeOf {
		nodeOf[i] = -1
	}
	open := map[int]int{} // attempt -> env calls so far
	latestSeq := map[uint32]uint64{}
	matchPlayers := map[uint64]uint32{}
	for _, e := range h.Events {
		switch e.Kind {
		case EvArrive:
			id := e.Msg
			st := s.Settlements[id]
			if len(open) > 0 {
				c[ReachedOverlap]++
			}
			open[e.Attempt] = 0
			switch {
			case arrivals[id] == 0:
				firstAt[id] = e.At
				if seq, ok := latestSeq[st.Player]; ok && st.Seq < seq {
					c[ReachedOutOfOrder]++
				}
				if p, ok := matchPlayers[st.Match]; ok && p != st.Player {
					c[ReachedSharedMatch]++
				}
				matchPlayers[st.Match] = st.Player
				if st.Kind >= KindThird {
					c[ReachedThirdKind]++
				}
			default:
				if e.Delivery >= 0 {
					c[ReachedCopy]++
					if e.At-firstAt[id] >= WindowTTL {
						c[ReachedFarCopy]++
					}
				}
				if e.Delivery < 0 && e.At-lastAt[id] >= slowRetryGap {
					c[ReachedSlowRetry]++
				}
				if nodeOf[id] != e.Node {
					c[ReachedOtherNode]++
				}
			}
			arrivals[id]++
			lastAt[id] = e.At
			nodeOf[id] = e.Node
			latestSeq[st.Player] = max(latestSeq[st.Player], st.Seq)
		case EvEffect, EvCredit:
			if e.Attempt >= 0 {
				open[e.Attempt]++
			} else if e.Kind == EvCredit && e.Detail.Applied {
				c[ReachedRecoverCredit]++
			}
		case EvFault:
			switch e.Fault {
			case FailBefore:
				c[ReachedFail]++
			case TimeoutAfter:
				c[ReachedTimeout]++
			}
		case EvCrash:
			if e.Attempt < 0 {
				c[ReachedCrashInRecov]++
			} else {
				c[ReachedCrash]++
				delete(open, e.Attempt)
			}
		case EvAck:
			if e.Ack == AckDuplicate {
				if open[e.Attempt] == 0 {
					c[ReachedWindowDup]++
				} else {
					c[ReachedStoreDup]++
				}
			}
			delete(open, e.Attempt)
		case EvPanic:
			delete(open, e.Attempt)
		case EvGiveUp:
			c[ReachedGiveUp]++
		case EvState:
			c[ReachedStateSample]++
		}
	}
	c.Merge(scheduleCoverage(s))
	return c
}

// scheduleCoverage counts what lies in the schedule itself: sequence
// restarts and quick room returns.
func scheduleCoverage(s Schedule) Coverage {
	c := Coverage{}
	for _, ids := range byPlayer(s.Settlements) {
		lastIn := map[uint32]int{}
		matches := 0
		var prev *Settlement
		for _, i := range ids {
			st := &s.Settlements[i]
			if prev == nil || st.Match != prev.Match {
				if prev != nil && st.Seq <= prev.Seq {
					c[ReachedRewind]++
				}
				if last, ok := lastIn[st.Room]; ok && prev != nil && st.Room != prev.Room && matches-1-last < DefaultReturnGap {
					c[ReachedQuickReturn]++
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
func Steady(c Coverage) Coverage {
	out := Coverage{}
	out.Merge(c)
	if n := out[ReachedWindowDup] + out[ReachedStoreDup]; n > 0 {
		out[ReachedDup] = n
	}
	delete(out, ReachedWindowDup)
	delete(out, ReachedStoreDup)
	return out
}

// exercises is what each family exists to make happen: a run of the
// family that reached none of it did not test what the family's column
// claims. clean makes nothing happen on purpose; late's lateness is
// relative to match starts, which a schedule does not record (its
// generator places every late arrival, TestGenEveryScheduleHasItsFamilyFeature).
var exercises = map[Family][]string{
	Duplicate:      {ReachedCopy},
	DeepReplay:     {ReachedFarCopy},
	Interleave:     {ReachedOutOfOrder},
	WindowExpiry:   {ReachedFarCopy},
	Crash:          {ReachedCrash},
	StoreError:     {ReachedFail},
	TimeoutSuccess: {ReachedTimeout},
	MultiNode:      {ReachedOtherNode},
	Concurrent:     {ReachedOverlap},
	SequenceRewind: {ReachedRewind},
	ThirdKind:      {ReachedThirdKind},
	RoomReturn:     {ReachedQuickReturn},
	WideIDs:        {ReachedSharedMatch},
	LongHistory:    {ReachedFarCopy},
}

// exercisesOf is what plain family f exists to make happen (names of
// Reached).
func exercisesOf(f Family) []string { return exercises[f] }
