package lootfaults

import (
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The names of what a loot run can reach (engine.Coverage counts them).
const (
	reachedCrash        = "crash"               // a node crashed (at an effect, or losing its answer)
	reachedCrashInRecov = "crash-in-recover"    // a node crashed inside Recover
	reachedFail         = "fail"                // an effect failed before it ran
	reachedTimeout      = "timeout"             // an effect ran and reported a timeout
	reachedPause        = "pause"               // a node stalled between two calls
	reachedGiveUp       = "give-up"             // the sender gave up on a request
	reachedRecoverItem  = "recover-item"        // an item was delivered inside Recover
	reachedDupClaim     = "dup-claim"           // a claim request arrived again (a copy or a retry)
	reachedOtherNode    = "other-node"          // a request arrived on two nodes
	reachedOverlap      = "overlap"             // two attempts ran interleaved
	reachedEarly        = "early-settle"        // a settle request arrived before its session's deadline
	reachedAtDeadline   = "claim-at-deadline"   // a claim arrived within a second of its session's deadline
	reachedSkewed       = "skewed"              // a request arrived at a node whose clock is off
	reachedLockExpired  = "lock-expired"        // a lock was taken while another holder's ttl had ended
	reachedForeignDel   = "foreign-unlock"      // a release deleted a lock another holder had taken since
	reachedCancel       = "cancel"              // a cancel request arrived
	reachedOutsider     = "outsider-claim"      // a claim by a player outside the team arrived
	reachedTie          = "tie"                 // two claims of one intent and fairness in a session arrived in one second
	reachedQuantity     = "quantity"            // a claim arrived for a session of several items
	reachedCompInPause  = "compensate-in-pause" // a compensate request arrived while a call was paused
)

// Reached lists every name coverageOf counts, in the order reports show
// them.
var reachedNames = []string{
	reachedCrash, reachedCrashInRecov, reachedFail, reachedTimeout, reachedPause, reachedGiveUp,
	reachedRecoverItem, reachedDupClaim, reachedOtherNode, reachedOverlap, reachedEarly, reachedAtDeadline,
	reachedSkewed, reachedLockExpired, reachedForeignDel, reachedCancel, reachedOutsider, reachedTie, reachedQuantity, reachedCompInPause,
}

// exercises is what each family exists to make happen: a cell whose runs
// reached none of it did not test what its column claims. clean makes
// nothing happen on purpose.
var exercises = map[engine.Family][]string{
	DuplicateClaim:   {reachedDupClaim},
	ConcurrentSettle: {reachedOverlap},
	EarlySettle:      {reachedEarly},
	LateClaim:        {reachedAtDeadline},
	LockExpiry:       {reachedPause, reachedLockExpired},
	ClockSkew:        {reachedSkewed},
	Crash:            {reachedCrash},
	StoreError:       {reachedFail},
	TimeoutSuccess:   {reachedTimeout},
	CancelRace:       {reachedCancel},
	Outsider:         {reachedOutsider},
	Ties:             {reachedTie},
	Quantity:         {reachedQuantity},
	CompensationRace: {reachedPause, reachedCompInPause},
}

// exercisesOf is what plain family f exists to make happen.
func exercisesOf(f engine.Family) []string { return exercises[f] }

// coverageOf counts what h reached.
func coverageOf(h History) engine.Coverage {
	c := engine.Coverage{}
	s := h.Schedule
	arrivals := make([]int, len(s.Requests))
	nodeOf := make([]int, len(s.Requests))
	open := map[int]bool{} // attempts in flight
	stalls := pauses(h.Events)
	type holder struct {
		token string
		set   bool
	}
	locks := map[string]holder{}
	got := map[int]string{}                   // attempt -> the token its last lock-get read
	lastClaim := map[[3]int64]time.Duration{} // (session, intent priority, wins) -> last claim arrival
	for _, e := range h.Events {
		switch e.Kind {
		case engine.EvArrive:
			id := e.Msg
			r := s.Requests[id]
			if len(open) > 0 {
				c[reachedOverlap]++
			}
			open[e.Attempt] = true
			if arrivals[id] > 0 {
				if r.Kind == ClaimItem {
					c[reachedDupClaim]++
				}
				if nodeOf[id] != e.Node {
					c[reachedOtherNode]++
				}
			}
			arrivals[id]++
			nodeOf[id] = e.Node
			if s.Skew(e.Node) != 0 {
				c[reachedSkewed]++
			}
			switch r.Kind {
			case SettleNow:
				if e.At < s.Sessions[r.Session].Deadline {
					c[reachedEarly]++
				}
			case CancelSession:
				c[reachedCancel]++
			case Compensate:
				if slices.ContainsFunc(stalls, func(p [2]time.Duration) bool { return p[0] <= e.At && e.At < p[1] }) {
					c[reachedCompInPause]++
				}
			case ClaimItem:
				x := s.Sessions[r.Session]
				if d := e.At - x.Deadline; d > -time.Second && d < time.Second {
					c[reachedAtDeadline]++
				}
				if !s.Member(r.Player) {
					c[reachedOutsider]++
				}
				if x.Quantity > 1 {
					c[reachedQuantity]++
				}
				if p := r.Intent.Priority(); p > 0 && arrivals[id] == 1 {
					k := [3]int64{int64(r.Session), int64(p), s.Wins(r.Player)}
					if last, ok := lastClaim[k]; ok && e.At/time.Second == last/time.Second {
						c[reachedTie]++
					}
					lastClaim[k] = e.At
				}
			}
		case engine.EvAck, engine.EvPanic:
			delete(open, e.Attempt)
		case engine.EvCrash:
			delete(open, e.Attempt)
			if e.Attempt < 0 {
				c[reachedCrashInRecov]++
			} else if e.Op != engine.OpPaused {
				c[reachedCrash]++
			}
		case engine.EvFault:
			switch e.Fault {
			case engine.FailBefore:
				c[reachedFail]++
			case engine.TimeoutAfter:
				c[reachedTimeout]++
			}
		case engine.EvPause:
			c[reachedPause]++
		case engine.EvGiveUp:
			c[reachedGiveUp]++
		case EvItem:
			if e.Attempt < 0 && e.Detail.OK {
				c[reachedRecoverItem]++
			}
		case EvLock:
			k := e.Detail.Key
			switch {
			case e.Op == OpLockSet && e.Detail.OK:
				if l := locks[k]; l.set && l.token != e.Detail.Token {
					c[reachedLockExpired]++
				}
				locks[k] = holder{e.Detail.Token, true}
			case e.Op == OpLockGet:
				got[e.Attempt] = e.Detail.Value
			case (e.Op == OpUnlock || e.Op == OpLockDel) && e.Detail.OK:
				if l := locks[k]; e.Op == OpLockDel && l.set && got[e.Attempt] != l.token {
					c[reachedForeignDel]++
				}
				delete(locks, k)
			}
		}
	}
	return c
}

// pauses are the stalls of a history: from each EvPause to the next event
// of its attempt, when it resumed (or the end, if it never did).
func pauses(events []Event) [][2]time.Duration {
	var out [][2]time.Duration
	for i, e := range events {
		if e.Kind != engine.EvPause {
			continue
		}
		end := events[len(events)-1].At
		for _, f := range events[i+1:] {
			if f.Attempt == e.Attempt {
				end = f.At
				break
			}
		}
		out = append(out, [2]time.Duration{e.At, end})
	}
	return out
}
