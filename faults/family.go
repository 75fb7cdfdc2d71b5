package faults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// Family is a fault family: a generator preset and a matrix column.
type Family = engine.Family

// The fault families, in matrix column order.
const (
	Clean        Family = "clean"         // every settlement delivered once, in order
	Duplicate    Family = "duplicate"     // extra copies close together
	Late         Family = "late"          // a settlement arrives after the player's next match started
	DeepReplay   Family = "deep-replay"   // a queue replays settlements several matches old
	Interleave   Family = "interleave"    // the old match's final after the new match's instant
	WindowExpiry Family = "window-expiry" // retries land just past the window ttl
	// Crash, StoreError and TimeoutSuccess also vary the sender: retrying
	// fast (inside every window), slowly (past every lease), or giving up
	// after one send so that only Recover can finish; crash also crashes
	// nodes inside Recover.
	Crash          Family = "crash"       // node crashes at every fault point
	StoreError     Family = "store-error" // durable ops and credits fail transiently
	TimeoutSuccess Family = "timeout-after-success"
	MultiNode      Family = "multi-node"      // retries land on another node
	Concurrent     Family = "concurrent"      // many identical deliveries at once, goroutines interleaved by Switches
	SequenceRewind Family = "sequence-rewind" // the sender's counter restarts
	ThirdKind      Family = "third-kind"      // the business adds a third settlement per match
	// RoomReturn: a player returns to a room within two matches, its round
	// restarting: the new match's (room, round) equals one of the last two
	// matches'. Every other family keeps returns MinReturnGap matches apart,
	// so this is the only column where that collision happens.
	RoomReturn Family = "room-return"
	// WideIDs: a team of players shares its matches, and player and match
	// ids are full-width values that come in pairs differing in one bit:
	// a durable key that drops or truncates any identity field collides.
	WideIDs Family = "wide-ids"
	// LongHistory: one player plays a thousand matches, with duplicates
	// and replays from hundreds of matches back: state that grows with
	// history, or a store that forgets old records, shows.
	LongHistory Family = "long-history"
)

// familyDoc is the family's one-line meaning (for `onceproof list` and
// reports); the preset's comments in gen.go say how the generator makes it
// happen.
func familyDoc(f Family) string {
	if d, ok := familyDocs[f]; ok {
		return d
	}
	parts := f.Parts()
	if len(parts) > 1 {
		docs := make([]string, len(parts))
		for i, p := range parts {
			docs[i] = familyDoc(p)
		}
		return strings.Join(docs, "; and ")
	}
	return "not a family"
}

var familyDocs = map[Family]string{
	Clean:          "every settlement delivered once, in order: the baseline",
	Duplicate:      "extra copies of a settlement close together",
	Late:           "a settlement arrives after the player's next match started, in another room",
	DeepReplay:     "a queue replays settlements several matches old, past every window",
	Interleave:     "the old match's final arrives after the new match's instant",
	WindowExpiry:   "copies arrive just as a window of faults.WindowTTL forgets them",
	Crash:          "a node crashes before or after any effect, or loses its ack",
	StoreError:     "a durable operation or credit fails transiently (nothing happened)",
	TimeoutSuccess: "a durable operation or credit happens but the caller is told it timed out",
	MultiNode:      "retries and copies land on another node of the cluster",
	Concurrent:     "identical deliveries at once on several nodes, interleaved at every env call",
	SequenceRewind: "the sender's per-player sequence counter restarts",
	ThirdKind:      "the business adds a third settlement per match",
	RoomReturn:     "a player returns to a room within two matches, its round restarting",
	WideIDs:        "players share matches; full-width ids in pairs that differ in one bit of one field",
	LongHistory:    "a thousand matches of one player, with replays from hundreds of matches back",
	SmallScope:     "every schedule within DefaultScope, not a sample: a cell holds exhaustively to it",
}

// runsOf is how many schedules of family f a cell of n schedules runs: n, or
// n/20 (at least 1) for a family with long-history, whose schedules are
// each about 40 times a plain family's (2,000 settlements against 50), so
// that its column costs about what the others cost (its 10 runs at n=200
// still settle 20,000 settlements).
func runsOf(f Family, n int) int {
	if slices.Contains(f.Parts(), LongHistory) {
		return max(1, n/20)
	}
	return n
}

// Families lists every family in matrix column order.
var Families = []Family{
	Clean, Duplicate, Late, DeepReplay, Interleave, WindowExpiry, Crash,
	StoreError, TimeoutSuccess, MultiNode, Concurrent, SequenceRewind, ThirdKind,
	RoomReturn, WideIDs, LongHistory, SmallScope,
}

// Property names a property props checks. The names live here so designs in
// impls/ (which may not import props) can declare their expected verdicts.
type Property = engine.Property

const (
	NoDup        Property = "NoDup"
	NoLoss       Property = "NoLoss"
	NoCrossRoom  Property = "NoCrossRoom"
	NoBlocking   Property = "NoBlocking"
	BoundedState Property = "BoundedState"
	HonestAck    Property = "HonestAck"
	ExactAmount  Property = "ExactAmount"
	Responsive   Property = "Responsive"
)

// Properties lists every property in report order.
var Properties = []Property{NoDup, NoLoss, NoCrossRoom, NoBlocking, BoundedState, HonestAck, ExactAmount, Responsive}

// Join combines families into one generator preset whose schedules have
// every listed family's features at once, e.g. Join(Late, Crash) is
// "late+crash". Gen and parse accept joined names.
func Join(fs ...Family) Family { return engine.Join(fs...) }

// checkFamily reports whether f is a family of Families or a Join of them
// that can be generated; the error lists the valid names.
func checkFamily(f Family) error {
	if slices.Contains(Families, f) {
		return nil // the common case, without splitting
	}
	var concurrent, faulty bool
	if parts := f.Parts(); len(parts) > 1 && slices.Contains(parts, SmallScope) {
		return fmt.Errorf("family %q joins small-scope, which is an enumeration, not a generator preset", string(f))
	}
	if err := engine.CheckParts(f, Families, "family"); err != nil {
		return err
	}
	for _, p := range f.Parts() {
		switch p {
		case Concurrent:
			concurrent = true
		case Crash, StoreError, TimeoutSuccess, MultiNode:
			faulty = true
		}
	}
	if concurrent && faulty {
		return fmt.Errorf("family %q joins concurrent with a family that injects faults; a concurrent schedule has none (its attempt numbers are not deterministic under RunOptions.Free)", string(f))
	}
	return nil
}
