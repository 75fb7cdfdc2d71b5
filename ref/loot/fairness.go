package loot

import (
	"context"
	"time"
)

// Fairness is what the server knows of one player's history with one loot
// code. The settler reads it from a FairnessProvider after its CAS, for the
// frozen claimants, and records it in the audit snapshot: the client never
// sends it (the source document takes fairScore from the request body, so
// a player could send -100 and win every roll).
//
// Which fields count depends on the rule version (see Rules): the document's
// rule counts Wins alone, so a newcomer at 0 beats every veteran until they
// have won as often (its section 8.3); the two variants it suggests read
// SeedMilli, or LastWin and Since.
type Fairness struct {
	// Wins is how many times the player won this loot code.
	Wins int64
	// SeedMilli is the server-wide average of Wins, in thousandths, when the
	// player's history began: the average-seeded rule starts a newcomer
	// there instead of at 0.
	SeedMilli int64
	// LastWin is the time of the player's last win of this loot code (zero:
	// never).
	LastWin time.Time
	// Since is when the player's history began (character creation): the
	// days-since-last-win rule counts from it for a player who never won.
	Since time.Time
}

// FairnessProvider is the server-side source of Fairness (the player's
// allocation history, kept by the game, not by a client).
//
// Contract:
//   - Fairness returns an entry for every player in players (the settler's
//     frozen claimants, no repeats) for loot code loot. A missing entry is
//     an error: the settler records nothing.
//   - It only reads. An error means nothing was learned: the settler stops
//     before recording anything, the session stays SETTLING, and once the
//     settle lease ends Recover (or the next Settle) takes it over and asks
//     again. Answers may differ between two asks; the one the recorded
//     settler used is kept in the audit snapshot.
//   - The returned map belongs to the caller. Safe for concurrent use.
type FairnessProvider interface {
	Fairness(ctx context.Context, loot string, players []PlayerID) (map[PlayerID]Fairness, error)
}
