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
	reachedDupRequest   = "dup-request"         // an open, start, settle, cancel or compensate request arrived again
	reachedOtherNode    = "other-node"          // a request arrived on two nodes
	reachedOverlap      = "overlap"             // two attempts ran interleaved
	reachedEarly        = "early-settle"        // a settle request arrived before its session's deadline
	reachedAtDeadline   = "claim-at-deadline"   // a claim arrived within a second of its session's deadline
	reachedSkewed       = "skewed"              // a request arrived at a node whose clock is off
	reachedLockExpired  = "lock-expired"        // a lock was taken while another holder's ttl had ended
	reachedStalledTrig  = "stalled-settle"      // a settle stalled past stallTTL and another trigger of its session came after it
	reachedForeignDel   = "foreign-unlock"      // a release deleted a lock another holder had taken since
	reachedCancel       = "cancel"              // a cancel request arrived
	reachedOutsider     = "outsider-claim"      // a claim by a player outside the team arrived
	reachedTie          = "tie"                 // two claims of one intent and fairness in a session arrived in one second
	reachedQuantity     = "quantity"            // a claim arrived for a session of several items
	reachedCompInPause  = "compensate-in-pause" // a compensate request arrived while a settle of a CLOSED session was paused
	reachedSharedLoot   = "shared-loot"         // a claim arrived for a session whose loot code an earlier session has
	reachedTeamChange   = "team-change"         // a claim arrived by a player in one of its session's and the previous session's team snapshots, not both
	reachedFairChange   = "fair-change"         // the fairness record of a player changed during the run
	reachedIntentChange = "intent-change"       // a claim arrived with another intent than its player's previous claim in its session
)

// Reached lists every name coverageOf counts, in the order reports show
// them.
var reachedNames = []string{
	reachedCrash, reachedCrashInRecov, reachedFail, reachedTimeout, reachedPause, reachedGiveUp,
	reachedRecoverItem, reachedDupClaim, reachedDupRequest, reachedOtherNode, reachedOverlap, reachedEarly, reachedAtDeadline,
	reachedSkewed, reachedLockExpired, reachedStalledTrig, reachedForeignDel, reachedCancel, reachedOutsider, reachedTie, reachedQuantity, reachedCompInPause,
	reachedSharedLoot, reachedTeamChange, reachedFairChange,
	reachedIntentChange,
}

// exercises is what each family exists to make happen: a cell whose runs
// reached none of it did not test what its column claims. clean makes
// nothing happen on purpose.
//
// Each is defined by what the world did (what arrived when, where, what it
// stalled, crashed or failed), never by a mechanism a design may or may not
// have chosen: lock-expiry asks for a settler stalled past the ttl a lock
// would have had while another trigger of its session came
// (stalled-settle), not for a lock that expired (lock-expired, which a
// design that takes no lock, as ref/loot allows with Config.Lock nil, never
// reaches; it is still counted, to show how deep a locking design looked).
// The rest were already of that kind: a claim arriving again, two attempts
// in flight at once, a trigger before the deadline, a claim within a second
// of it, a request on a skewed node, an injected crash, failure or timeout
// (at a call the design made: every design makes calls), a cancel, an
// outsider's claim, two claims in one second, a drop of several items, a
// compensation tick while a settler whose session the world saw CLOSED
// was stalled (a settler still delivering), a claim on a session whose
// loot code an earlier one dropped, a claim by a player whom one of two
// sessions' snapshots holds and the other not, a fairness record that
// changed (an item counted as a win, or a change at a freeze), a claim
// arriving with another intent than its player's previous one.
var exercises = map[engine.Family][]string{
	Families.DuplicateClaim:   {reachedDupClaim},
	Families.ConcurrentSettle: {reachedOverlap},
	Families.EarlySettle:      {reachedEarly},
	Families.LateClaim:        {reachedAtDeadline},
	Families.LockExpiry:       {reachedStalledTrig},
	Families.ClockSkew:        {reachedSkewed},
	Families.Crash:            {reachedCrash},
	Families.StoreError:       {reachedFail},
	Families.TimeoutSuccess:   {reachedTimeout},
	Families.CancelRace:       {reachedCancel},
	Families.Outsider:         {reachedOutsider},
	Families.Ties:             {reachedTie},
	Families.Quantity:         {reachedQuantity},
	Families.CompensationRace: {reachedPause, reachedCompInPause},
	Families.SharedLoot:       {reachedSharedLoot},
	Families.TeamChange:       {reachedTeamChange},
	Families.FairChange:       {reachedFairChange},
	Families.IntentChange:     {reachedIntentChange},
}

// exercisesOf is what plain family f exists to make happen.
func exercisesOf(f engine.Family) []string { return exercises[f] }

// stallTTL is how long a settler must stall for a lock it might have
// taken to have expired under it: 30s, the longest ttl a design here takes
// (ref/loot's DefaultSettleLease, its lock's ttl as well as its settle
// lease, above source 004's 10s lock-expire-millis). lock-expiry's long
// stall (gen's farPause, 35s) outlasts it and its second trigger comes 34s
// in, so a lock-expiry run with the long stall on a settle that had a call
// left to stall reaches stalled-settle whatever the design locks.
const stallTTL = 30 * time.Second

// coverageOf counts what h reached.
func coverageOf(h History) engine.Coverage {
	c := engine.Coverage{}
	s := h.Schedule
	arrivals := make([]int, len(s.Requests))
	nodeOf := make([]int, len(s.Requests))
	open := map[int]bool{} // attempts in flight
	stalls := settleStalls(h)
	c[reachedStalledTrig] += stalledSettles(h, stalls)
	type holder struct {
		token string
		set   bool
	}
	locks := map[string]holder{}
	got := map[int]string{}                   // attempt -> the token its last lock-get read
	lastClaim := map[[3]int64]time.Duration{} // (session, intent priority, wins) -> last claim arrival
	intentOf := map[[2]int64]Intent{}         // (session, player) -> the intent of its last claim arrival
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
				if r.Kind == Kinds.ClaimItem {
					c[reachedDupClaim]++
				} else {
					c[reachedDupRequest]++
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
			case Kinds.SettleNow:
				if e.At < s.Sessions[r.Session].Deadline {
					c[reachedEarly]++
				}
			case Kinds.CancelSession:
				c[reachedCancel]++
			case Kinds.Compensate:
				if slices.ContainsFunc(stalls, func(p stall) bool { return p.from <= e.At && e.At < p.to && p.closed }) {
					c[reachedCompInPause]++
				}
			case Kinds.ClaimItem:
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
				if slices.ContainsFunc(s.Sessions[:r.Session], func(y Session) bool { return y.Loot() == x.Loot() }) {
					c[reachedSharedLoot]++
				}
				if r.Session > 0 && s.MemberOf(r.Session, r.Player) != s.MemberOf(r.Session-1, r.Player) {
					c[reachedTeamChange]++
				}
				k := [2]int64{int64(r.Session), int64(r.Player)}
				if in, ok := intentOf[k]; ok && in != r.Intent {
					c[reachedIntentChange]++
				}
				intentOf[k] = r.Intent
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
		case evItem:
			if e.Attempt < 0 && e.Detail.OK {
				c[reachedRecoverItem]++
			}
			if e.Detail.OK && s.CountWins {
				c[reachedFairChange]++
			}
		case evFair:
			c[reachedFairChange]++
		case evLock:
			k := e.Detail.Key
			switch {
			case e.Op == opLockSet && e.Detail.OK:
				if l := locks[k]; l.set && l.token != e.Detail.Token {
					c[reachedLockExpired]++
				}
				locks[k] = holder{e.Detail.Token, true}
			case e.Op == opLockGet:
				got[e.Attempt] = e.Detail.Value
			case (e.Op == opUnlock || e.Op == opLockDel) && e.Detail.OK:
				if l := locks[k]; e.Op == opLockDel && l.set && got[e.Attempt] != l.token {
					c[reachedForeignDel]++
				}
				delete(locks, k)
			}
		}
	}
	return c
}

// stall is one stall of a settle: the paused event, when its attempt
// resumed (or the end, if it never did), and whether the world last saw
// the settle's session CLOSED when it stalled: a settler that recorded its
// result and is still delivering.
type stall struct {
	e        Event
	from, to time.Duration
	closed   bool
}

// settleStalls are the stalls of h's settle attempts, in order.
func settleStalls(h History) []stall {
	s := h.Schedule
	var out []stall
	status := map[int]Status{} // session -> its status as last seen
	for i, e := range h.Events {
		if e.Kind == evView {
			status[e.Detail.Session] = e.Detail.Record.Status
		}
		if e.Kind != engine.EvPause || e.Attempt < 0 || e.Msg < 0 || s.Requests[e.Msg].Kind != Kinds.SettleNow {
			continue
		}
		end := h.Events[len(h.Events)-1].At
		for _, f := range h.Events[i+1:] {
			if f.Attempt == e.Attempt {
				end = f.At
				break
			}
		}
		out = append(out, stall{e, e.At, end, status[s.Requests[e.Msg].Session] == Statuses.Closed})
	}
	return out
}

// stalledSettles counts the stalls of h's settles that lasted past stallTTL
// during which another settle of the same session arrived, stallTTL or
// more into the stall: the settler would have lost any lock it took, and
// another node was asked to settle.
func stalledSettles(h History, stalls []stall) int {
	s := h.Schedule
	n := 0
	for _, p := range stalls {
		if p.to-p.from < stallTTL {
			continue
		}
		x := s.Requests[p.e.Msg].Session
		if slices.ContainsFunc(h.Events, func(e Event) bool {
			return e.Kind == engine.EvArrive && e.Attempt != p.e.Attempt && s.Requests[e.Msg].Kind == Kinds.SettleNow &&
				s.Requests[e.Msg].Session == x && e.At >= p.from+stallTTL && e.At < p.to
		}) {
			n++
		}
	}
	return n
}
