package lootfaults

import (
	"github.com/onceproof/onceproof/engine"
)

// Events is the loot history's vocabulary, which package lootprops reads:
// the world's event kinds, beside the engine's, and the op names of its
// own services on them. One value rather than a name each because a world
// package stays within 50 exported names (issue 21) and these are plumbing
// a design author never names.
var Events = struct {
	// View: a session's record changed in the design's database
	// (Detail.Session, Detail.Record: what it says now). The world reads
	// the database after every store call, at the call's time.
	View engine.EventKind
	// Item: a Deliver reached the inventory ledger (Detail.Session,
	// Player, Key; OK: applied, false for a key already applied).
	Item engine.EventKind
	// Lock: a lock service call (Op: LockSet, LockGet, LockDel, Unlock;
	// Detail.Key, Token; OK: set or deleted; Value: Get's token).
	Lock engine.EventKind
	// Fair: the server's fairness record of Detail.Player went up by
	// Detail.Wins when session Detail.Session's claims froze
	// (Session.Bumps). An Item event applied under Schedule.CountWins
	// raises its player's by one, with no event of its own.
	Fair engine.EventKind
	// The ops of Lock and Item events: the lock service's four calls and
	// the inventory's Deliver.
	LockSet, LockGet, LockDel, Unlock, Deliver string
}{
	View: evView, Item: evItem, Lock: evLock, Fair: evFair,
	LockSet: opLockSet, LockGet: opLockGet, LockDel: opLockDel, Unlock: opUnlock, Deliver: opDeliver,
}

// The loot world's event kinds, beside the engine's (Events says what
// each records).
const (
	evView = engine.EvWorld + iota
	evItem
	evLock
	evFair
)

// kindName names an event kind, the loot world's included.
func kindName(k engine.EventKind) string {
	switch k {
	case evView:
		return "view"
	case evItem:
		return "item"
	case evLock:
		return "lock"
	case evFair:
		return "fair"
	}
	return k.String()
}

// Detail is the loot world's part of an Event.
type Detail struct {
	// Session is the session's index (-1: none, or a session number the
	// schedule does not have).
	Session int
	Player  PlayerID
	Key     string
	Token   string
	Value   string
	OK      bool
	// Wins is, on an Events.Fair event, how much the player's fairness
	// record went up.
	Wins int64
	// Record is, on an Events.View event, the session's record (shared: read only).
	Record *Record
}

// Event is one entry of a History.
type Event = engine.Event[Detail]

// History is what a run produced (see engine.History).
type History engine.History[Schedule, Detail]

// WinsAt is p's fairness record as the world kept it just before event
// seq: the schedule's, plus every Events.Fair change and, under
// Schedule.CountWins, every item of p the inventory applied, before seq.
// It is what a design's Env.Wins read there returned.
func (h History) WinsAt(p PlayerID, seq int) int64 {
	w := h.Schedule.Wins(p)
	for _, e := range h.Events {
		if e.Seq >= seq {
			break
		}
		switch {
		case e.Kind == evFair && e.Detail.Player == p:
			w += e.Detail.Wins
		case e.Kind == evItem && e.Detail.OK && e.Detail.Player == p && h.Schedule.CountWins:
			w++
		}
	}
	return w
}
