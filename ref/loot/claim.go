package loot

import "time"

// Intent is a player's claim on a drop. Stores keep it as its text.
type Intent string

const (
	// Need: the player needs the item (priority 10, the source document's).
	Need Intent = "NEED"
	// Greed: the player would take it (priority 1).
	Greed Intent = "GREED"
	// Pass: the player declines. A PASS claim is recorded (the player
	// answered) but never wins, whatever the quantity.
	Pass Intent = "PASS"
)

// Priority is the rank the intent gives, higher first: the source
// document's NEED 10 and GREED 1, derived from the intent on the server
// and never sent by a client. PASS has none: it never wins.
func (i Intent) Priority() int {
	switch i {
	case Need:
		return 10
	case Greed:
		return 1
	}
	return 0
}

// Valid reports whether i is NEED, GREED or PASS.
func (i Intent) Valid() bool { return i == Need || i == Greed || i == Pass }

// ClaimRequest is what a player sends. It has no player field on purpose:
// the claimant is the authenticated Caller the Service takes beside it.
type ClaimRequest struct {
	// Session is the session number (see CheckSessionNo).
	Session string
	// Intent is NEED, GREED or PASS.
	Intent Intent
	_      struct{}
}

// Validate returns nil if r can be claimed, else ErrBadArgument saying
// why: a session number no store could hold, or an unknown intent. Whether
// the session exists and takes the claim is the store's to judge.
func (r ClaimRequest) Validate() error {
	if err := CheckSessionNo(r.Session); err != nil {
		return err
	}
	if !r.Intent.Valid() {
		return badArg("unknown intent %q", r.Intent)
	}
	return nil
}

// Claim is one player's effective claim in one session: a store keeps one
// per (session, player) by a unique key.
type Claim struct {
	Session string
	Player  PlayerID
	Intent  Intent
	// At is the store's clock when this intent was written: kept by an
	// identical retry, moved when the player changes the intent (so nobody
	// reserves an early place with a GREED and upgrades it at the last
	// moment). The third ranking key.
	At time.Time
}
