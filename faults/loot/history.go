package lootfaults

import (
	"github.com/onceproof/onceproof/engine"
)

// The loot world's event kinds, beside the engine's.
const (
	// EvView: a session's record changed in the design's database
	// (Detail.Session, Detail.Record: what it says now). The world reads
	// the database after every store call, at the call's time.
	EvView = engine.EvWorld + iota
	// EvItem: a Deliver reached the inventory ledger (Detail.Session,
	// Player, Key; OK: applied, false for a key already applied).
	EvItem
	// EvLock: a lock service call (Op: lock-set, lock-get, lock-del,
	// unlock; Detail.Key, Token; OK: set or deleted; Value: Get's token).
	EvLock
)

// kindName names an event kind, the loot world's included.
func kindName(k engine.EventKind) string {
	switch k {
	case EvView:
		return "view"
	case EvItem:
		return "item"
	case EvLock:
		return "lock"
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
	// Record is, on EvView, the session's record (shared: read only).
	Record *Record
}

// Event is one entry of a History.
type Event = engine.Event[Detail]

// History is what a run produced (see engine.History).
type History engine.History[Schedule, Detail]
