package lootfaults

import (
	"fmt"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// PlayerID identifies a player (> 0).
type PlayerID int64

// Intent is a player's claim: NEED (priority 10), GREED (1) or PASS (never
// wins), as source 004 ranks them. The world spells the rule out itself,
// apart from ref/loot's: the oracle judging every design must not share
// the reference's code.
type Intent string

// Intents names the intents, one field each (a value, as Families, for the
// package's budget of names); the strings are source 004's and the text
// form's.
var Intents = struct{ Need, Greed, Pass Intent }{Need: "NEED", Greed: "GREED", Pass: "PASS"}

// Priority is the rank an intent gives, higher first (0: PASS, never wins).
func (i Intent) Priority() int {
	switch i {
	case Intents.Need:
		return 10
	case Intents.Greed:
		return 1
	}
	return 0
}

// Status is where a session is in its life (source 004's state machine).
type Status string

// Statuses names the statuses, one field each, and None ("") for a session
// that does not exist yet (a value, as Families, for the package's budget
// of names); the strings are source 004's, as the designs' databases store
// them.
var Statuses = struct{ None, Open, Claiming, Settling, Closed, Canceled Status }{
	None: "", Open: "OPEN", Claiming: "CLAIMING", Settling: "SETTLING", Closed: "CLOSED", Canceled: "CANCELED",
}

// Forward reports whether a session may go from one status to another: the
// table of source 004 (OPEN -> CLAIMING -> SETTLING -> CLOSED, CANCELED
// from any status before CLOSED, nothing back), where a new session starts
// OPEN or, as the document's own code opens it, CLAIMING.
func Forward(from, to Status) bool {
	switch from {
	case Statuses.None:
		return to == Statuses.Open || to == Statuses.Claiming
	case Statuses.Open:
		return to == Statuses.Claiming || to == Statuses.Canceled
	case Statuses.Claiming:
		return to == Statuses.Settling || to == Statuses.Canceled
	case Statuses.Settling:
		return to == Statuses.Closed || to == Statuses.Canceled
	}
	return false
}

// Session is one team drop to allocate: the ground truth the harness knows.
type Session struct {
	// ID is the session's index in Schedule.Sessions (x0, x1, ...); its
	// number, the business key designs see, is No().
	ID int
	// Quantity is how many items dropped: the top Quantity claims get one
	// each.
	Quantity int
	// Deadline ends claiming, by the database's clock: virtual time since
	// engine.Epoch.
	Deadline time.Duration
	// Code is the loot code of the drop ("": item<ID>, a code of its own).
	// Two sessions of one code are the same boss dropping the same item
	// twice (the shared-loot family): source 004's grant_no is
	// session:player:loot, so a player may win that item in each.
	Code string
	// Members is the team snapshot the session takes when it opens (nil:
	// Schedule.Team; sorted, distinct, > 0). A team changes between
	// sessions (team-change): source 004's §5 snapshots the members at
	// the session's creation and judges claims by that snapshot, not by
	// the live team, "because a player may leave the team during the
	// allocation".
	Members []PlayerID
	// Bumps are changes of the server's fairness record the world makes
	// when the session's claims freeze (the first record it reads
	// SETTLING or CLOSED): each player's wins go up by Wins, as another
	// team's win of the same item recorded while this session settles
	// (fair-change).
	Bumps []Fair
}

// No is the session's number, "x" and its ID.
func (s Session) No() string { return fmt.Sprintf("x%d", s.ID) }

// Loot is the loot code of the session's drop: Code, or item<ID>.
func (s Session) Loot() string {
	if s.Code != "" {
		return s.Code
	}
	return fmt.Sprintf("item%d", s.ID)
}

// Kind is what a request asks.
type Kind uint8

// Kinds names the request kinds, one field each (a value, as Families, for
// the package's budget of names). Open, start, settle, cancel and
// compensate come from the game server (a drop, a timer, an operator);
// claims from players. The numbers index kindNames.
var Kinds = struct {
	OpenSession   Kind // open the session (its definition and team snapshot)
	StartClaims   Kind // open it to claims (OPEN -> CLAIMING)
	ClaimItem     Kind // a player's claim (NEED, GREED or PASS)
	SettleNow     Kind // the scheduler's settle trigger
	CancelSession Kind // void the session
	Compensate    Kind // the compensation job's tick (deliver what is pending)
}{OpenSession: 0, StartClaims: 1, ClaimItem: 2, SettleNow: 3, CancelSession: 4, Compensate: 5}

var kindNames = [...]string{"open", "start", "claim", "settle", "cancel", "compensate"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind%d", uint8(k))
}

// Request is one request, the message the sender delivers at least once.
type Request struct {
	// ID is the request's index in Schedule.Requests (r0, r1, ...).
	ID   int
	Kind Kind
	// Session is the session's index (-1 for Compensate: all of them).
	Session int
	// Player and Intent are a claim's: the authenticated caller and what
	// it claims.
	Player PlayerID
	Intent Intent
}

// Fair is the server's fairness record of one player: how many times it
// won this kind of item (source 004's fair_score, "lower first").
type Fair struct {
	Player PlayerID
	Wins   int64
}

// Schedule is one run of the loot world, as data: a Frame (its deliveries
// name requests: Delivery.Msg is a request's index) beside the ground
// truth. It prints to text (format) and parses back (parse).
type Schedule struct {
	engine.Frame
	// Team is the member snapshot every session takes when it opens
	// (sorted, distinct, > 0). Other players are outsiders.
	Team []PlayerID
	// Fairness is the server's record per player (a player not listed has
	// 0 wins), sorted by player, when the run starts.
	Fairness []Fair
	// CountWins makes the record count wins as a real fairness service
	// does (fair-change): every item the inventory applies adds one to its
	// player's wins, so a session's winner ranks lower in the next one.
	// Without it (and without Bumps) the record is constant.
	CountWins bool
	// Skews are the node clocks' offsets from the database's clock, one per
	// node (nil: all 0). LockSkew is the lock service's.
	Skews    []time.Duration
	LockSkew time.Duration
	// Sessions and Requests are the ground truth; Sessions[i].ID == i and
	// Requests[i].ID == i.
	Sessions []Session
	Requests []Request
}

// Wins is p's fairness record in s when the run starts (0 if none).
func (s Schedule) Wins(p PlayerID) int64 {
	for _, f := range s.Fairness {
		if f.Player == p {
			return f.Wins
		}
	}
	return 0
}

// Member reports whether p is in the team snapshot of some session (or in
// Team): whether p is a member at all, not an outsider.
func (s Schedule) Member(p PlayerID) bool {
	if slices.Contains(s.Team, p) {
		return true
	}
	return slices.ContainsFunc(s.Sessions, func(x Session) bool { return slices.Contains(x.Members, p) })
}

// TeamOf is session x's team snapshot: its Members, or Team.
func (s Schedule) TeamOf(x int) []PlayerID {
	if x >= 0 && x < len(s.Sessions) && s.Sessions[x].Members != nil {
		return s.Sessions[x].Members
	}
	return s.Team
}

// MemberOf reports whether p is in session x's team snapshot.
func (s Schedule) MemberOf(x int, p PlayerID) bool { return slices.Contains(s.TeamOf(x), p) }

// Skew is node n's clock offset.
func (s Schedule) Skew(n int) time.Duration {
	if n < len(s.Skews) {
		return s.Skews[n]
	}
	return 0
}
