package lootfaults

import (
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The names of what a loot run can reach (engine.Coverage counts them).
const (
	ReachedCrash        = "crash"               // a node crashed (at an effect, or losing its answer)
	ReachedCrashInRecov = "crash-in-recover"    // a node crashed inside Recover
	ReachedFail         = "fail"                // an effect failed before it ran
	ReachedTimeout      = "timeout"             // an effect ran and reported a timeout
	ReachedPause        = "pause"               // a node stalled between two calls
	ReachedGiveUp       = "give-up"             // the sender gave up on a request
	ReachedRecoverItem  = "recover-item"        // an item was delivered inside Recover
	ReachedDupClaim     = "dup-claim"           // a claim request arrived again (a copy or a retry)
	ReachedOtherNode    = "other-node"          // a request arrived on two nodes
	ReachedOverlap      = "overlap"             // two attempts ran interleaved
	ReachedEarly        = "early-settle"        // a settle request arrived before its session's deadline
	ReachedAtDeadline   = "claim-at-deadline"   // a claim arrived within a second of its session's deadline
	ReachedSkewed       = "skewed"              // a request arrived at a node whose clock is off
	ReachedLockExpired  = "lock-expired"        // a lock was taken while another holder's ttl had ended
	ReachedStalledTrig  = "stalled-settle"      // a settle stalled past stallTTL and another trigger of its session came after it
	ReachedForeignDel   = "foreign-unlock"      // a release deleted a lock another holder had taken since
	ReachedCancel       = "cancel"              // a cancel request arrived
	ReachedOutsider     = "outsider-claim"      // a claim by a player outside the team arrived
	ReachedTie          = "tie"                 // two claims of one intent and fairness in a session arrived in one second
	ReachedQuantity     = "quantity"            // a claim arrived for a session of several items
	ReachedCompInPause  = "compensate-in-pause" // a compensate request arrived while a settle of a CLOSED session was paused
)

// Reached lists every name CoverageOf counts, in the order reports show
// them.
var Reached = []string{
	ReachedCrash, ReachedCrashInRecov, ReachedFail, ReachedTimeout, ReachedPause, ReachedGiveUp,
	ReachedRecoverItem, ReachedDupClaim, ReachedOtherNode, ReachedOverlap, ReachedEarly, ReachedAtDeadline,
	ReachedSkewed, ReachedLockExpired, ReachedStalledTrig, ReachedForeignDel, ReachedCancel, ReachedOutsider, ReachedTie, ReachedQuantity, ReachedCompInPause,
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
// was stalled (a settler still delivering).
var exercises = map[engine.Family][]string{
	DuplicateClaim:   {ReachedDupClaim},
	ConcurrentSettle: {ReachedOverlap},
	EarlySettle:      {ReachedEarly},
	LateClaim:        {ReachedAtDeadline},
	LockExpiry:       {ReachedStalledTrig},
	ClockSkew:        {ReachedSkewed},
	Crash:            {ReachedCrash},
	StoreError:       {ReachedFail},
	TimeoutSuccess:   {ReachedTimeout},
	CancelRace:       {ReachedCancel},
	Outsider:         {ReachedOutsider},
	Ties:             {ReachedTie},
	Quantity:         {ReachedQuantity},
	CompensationRace: {ReachedPause, ReachedCompInPause},
}

// Exercises is what plain family f exists to make happen.
func Exercises(f engine.Family) []string { return exercises[f] }

// stallTTL is how long a settler must stall for a lock it might have
// taken to have expired under it: 30s, the longest ttl a design here takes
// (ref/loot's DefaultSettleLease, its lock's ttl as well as its settle
// lease, above source 004's 10s lock-expire-millis). lock-expiry's long
// stall (gen's farPause, 35s) outlasts it and its second trigger comes 34s
// in, so a lock-expiry run with the long stall on a settle that had a call
// left to stall reaches stalled-settle whatever the design locks.
const stallTTL = 30 * time.Second

// CoverageOf counts what h reached.
func CoverageOf(h History) engine.Coverage {
	c := engine.Coverage{}
	s := h.Schedule
	arrivals := make([]int, len(s.Requests))
	nodeOf := make([]int, len(s.Requests))
	open := map[int]bool{} // attempts in flight
	stalls := settleStalls(h)
	c[ReachedStalledTrig] += stalledSettles(h, stalls)
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
				c[ReachedOverlap]++
			}
			open[e.Attempt] = true
			if arrivals[id] > 0 {
				if r.Kind == ClaimItem {
					c[ReachedDupClaim]++
				}
				if nodeOf[id] != e.Node {
					c[ReachedOtherNode]++
				}
			}
			arrivals[id]++
			nodeOf[id] = e.Node
			if s.Skew(e.Node) != 0 {
				c[ReachedSkewed]++
			}
			switch r.Kind {
			case SettleNow:
				if e.At < s.Sessions[r.Session].Deadline {
					c[ReachedEarly]++
				}
			case CancelSession:
				c[ReachedCancel]++
			case Compensate:
				if slices.ContainsFunc(stalls, func(p stall) bool { return p.from <= e.At && e.At < p.to && p.closed }) {
					c[ReachedCompInPause]++
				}
			case ClaimItem:
				x := s.Sessions[r.Session]
				if d := e.At - x.Deadline; d > -time.Second && d < time.Second {
					c[ReachedAtDeadline]++
				}
				if !s.Member(r.Player) {
					c[ReachedOutsider]++
				}
				if x.Quantity > 1 {
					c[ReachedQuantity]++
				}
				if p := r.Intent.Priority(); p > 0 && arrivals[id] == 1 {
					k := [3]int64{int64(r.Session), int64(p), s.Wins(r.Player)}
					if last, ok := lastClaim[k]; ok && e.At/time.Second == last/time.Second {
						c[ReachedTie]++
					}
					lastClaim[k] = e.At
				}
			}
		case engine.EvAck, engine.EvPanic:
			delete(open, e.Attempt)
		case engine.EvCrash:
			delete(open, e.Attempt)
			if e.Attempt < 0 {
				c[ReachedCrashInRecov]++
			} else if e.Op != engine.OpPaused {
				c[ReachedCrash]++
			}
		case engine.EvFault:
			switch e.Fault {
			case engine.FailBefore:
				c[ReachedFail]++
			case engine.TimeoutAfter:
				c[ReachedTimeout]++
			}
		case engine.EvPause:
			c[ReachedPause]++
		case engine.EvGiveUp:
			c[ReachedGiveUp]++
		case EvItem:
			if e.Attempt < 0 && e.Detail.OK {
				c[ReachedRecoverItem]++
			}
		case EvLock:
			k := e.Detail.Key
			switch {
			case e.Op == OpLockSet && e.Detail.OK:
				if l := locks[k]; l.set && l.token != e.Detail.Token {
					c[ReachedLockExpired]++
				}
				locks[k] = holder{e.Detail.Token, true}
			case e.Op == OpLockGet:
				got[e.Attempt] = e.Detail.Value
			case (e.Op == OpUnlock || e.Op == OpLockDel) && e.Detail.OK:
				if l := locks[k]; e.Op == OpLockDel && l.set && got[e.Attempt] != l.token {
					c[ReachedForeignDel]++
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
		if e.Kind == EvView {
			status[e.Detail.Session] = e.Detail.Record.Status
		}
		if e.Kind != engine.EvPause || e.Attempt < 0 || e.Msg < 0 || s.Requests[e.Msg].Kind != SettleNow {
			continue
		}
		end := h.Events[len(h.Events)-1].At
		for _, f := range h.Events[i+1:] {
			if f.Attempt == e.Attempt {
				end = f.At
				break
			}
		}
		out = append(out, stall{e, e.At, end, status[s.Requests[e.Msg].Session] == Closed})
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
			return e.Kind == engine.EvArrive && e.Attempt != p.e.Attempt && s.Requests[e.Msg].Kind == SettleNow &&
				s.Requests[e.Msg].Session == x && e.At >= p.from+stallTTL && e.At < p.to
		}) {
			n++
		}
	}
	return n
}
