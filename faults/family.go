package faults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// Family is a fault family: a generator preset and a matrix column.
type Family = engine.Family

// Families names the fault families, one field each, in matrix column
// order; the list itself is World.Families. They are fields of one value
// rather than a constant each because a world package stays within 50
// exported names (issue 21) and the families alone are 17: a caller writes
// faults.Families.Crash, which reads as the name it is, and the value is
// never assigned (the strings are the matrix's column names, results/ keys
// on them).
var Families = struct {
	Clean        Family // every settlement delivered once, in order
	Duplicate    Family // extra copies close together
	Late         Family // a settlement arrives after the player's next match started
	DeepReplay   Family // a queue replays settlements several matches old
	Interleave   Family // the old match's final after the new match's instant
	WindowExpiry Family // retries land just past the window ttl
	// Crash, StoreError and TimeoutSuccess also vary the sender: retrying
	// fast (inside every window), slowly (past every lease), or giving up
	// after one send so that only Recover can finish; crash also crashes
	// nodes inside Recover.
	Crash          Family // node crashes at every fault point
	StoreError     Family // durable ops and credits fail transiently
	TimeoutSuccess Family // a durable op or credit happens, the caller is told it timed out
	MultiNode      Family // retries land on another node
	Concurrent     Family // many identical deliveries at once, goroutines interleaved by Switches
	SequenceRewind Family // the sender's counter restarts
	ThirdKind      Family // the business adds a third settlement per match
	// RoomReturn: a player returns to a room within two matches, its round
	// restarting: the new match's (room, round) equals one of the last two
	// matches'. Every other family keeps returns MinReturnGap matches apart,
	// so this is the only column where that collision happens.
	RoomReturn Family
	// WideIDs: a team of players shares its matches, and player and match
	// ids are full-width values that come in pairs differing in one bit:
	// a durable key that drops or truncates any identity field collides.
	WideIDs Family
	// LongHistory: one player plays a thousand matches, with duplicates
	// and replays from hundreds of matches back, and one schedule in ten
	// (gen_long.go) is 50,000 matches replaying the very first after all
	// the others: state that grows with history, or a store that forgets
	// old records, shows.
	LongHistory Family
	// SmallScope is the family of every schedule within defaultScope
	// (enumerate), not a sample: a cell of it holds "exhaustively to the
	// scope". generate samples the enumeration; a matrix runs all of it.
	SmallScope Family
}{
	Clean: "clean", Duplicate: "duplicate", Late: "late", DeepReplay: "deep-replay",
	Interleave: "interleave", WindowExpiry: "window-expiry", Crash: "crash",
	StoreError: "store-error", TimeoutSuccess: "timeout-after-success",
	MultiNode: "multi-node", Concurrent: "concurrent", SequenceRewind: "sequence-rewind",
	ThirdKind: "third-kind", RoomReturn: "room-return", WideIDs: "wide-ids",
	LongHistory: "long-history", SmallScope: "small-scope",
}

// familyDoc is the family's one-line meaning (for `onceproof list` and
// reports; a documented join's reason, another joined family's parts'
// joined); the preset's comments in gen.go say how the generator makes it
// happen.
func familyDoc(f Family) string {
	if d, ok := familyDocs[f]; ok {
		return d
	}
	if d, ok := joinDocs[f]; ok {
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
	Families.Clean:          "every settlement delivered once, in order: the baseline",
	Families.Duplicate:      "extra copies of a settlement close together",
	Families.Late:           "a settlement arrives after the player's next match started, in another room",
	Families.DeepReplay:     "a queue replays settlements several matches old, past every window",
	Families.Interleave:     "the old match's final arrives after the new match's instant",
	Families.WindowExpiry:   "copies arrive just as a window of faults.WindowTTL forgets them",
	Families.Crash:          "a node crashes before or after any effect, or loses its ack",
	Families.StoreError:     "a durable operation or credit fails transiently (nothing happened)",
	Families.TimeoutSuccess: "a durable operation or credit happens but the caller is told it timed out",
	Families.MultiNode:      "retries and copies land on another node of the cluster",
	Families.Concurrent:     "identical deliveries at once on several nodes, interleaved at every env call",
	Families.SequenceRewind: "the sender's per-player sequence counter restarts",
	Families.ThirdKind:      "the business adds a third settlement per match",
	Families.RoomReturn:     "a player returns to a room within two matches, its round restarting",
	Families.WideIDs:        "players share matches; full-width ids in pairs that differ in one bit of one field",
	Families.LongHistory:    "a thousand matches of one player, replays from hundreds of matches back; one schedule in ten is 50,000 matches replaying the very first",
	Families.SmallScope:     "every schedule within DefaultScope, not a sample: a cell holds exhaustively to it",
}

// runsOf is how many schedules of family f a cell of n schedules runs: n, or
// n/20 (at least 1) for a family with long-history, whose schedules are
// each about 40 times a plain family's (2,000 settlements against 50), so
// that its column costs about what the others cost (its 10 runs at n=200
// still settle 20,000 settlements).
func runsOf(f Family, n int) int {
	if slices.Contains(f.Parts(), Families.LongHistory) {
		return max(1, n/20)
	}
	return n
}

// families lists every family in matrix column order (World.Families).
var families = []Family{
	Families.Clean, Families.Duplicate, Families.Late, Families.DeepReplay, Families.Interleave, Families.WindowExpiry, Families.Crash,
	Families.StoreError, Families.TimeoutSuccess, Families.MultiNode, Families.Concurrent, Families.SequenceRewind, Families.ThirdKind,
	Families.RoomReturn, Families.WideIDs, Families.LongHistory, Families.SmallScope,
}

// joins are the joined families the matrix and TestDesign run after
// families (World.Joins), each for a case neither part makes alone; its
// doc says which. Add one with its reason here; a design's verdict in it
// follows from its parts' (engine.Declaration.Expected) unless it
// declares the join itself.
var joins = []Family{Join(Families.Late, Families.Crash), Join(Families.ThirdKind, Families.Crash)}

var joinDocs = map[Family]string{
	joins[0]: "a late settlement crashes a node and is retried after the player's next match started: " +
		"a retry that must be told from a new settlement by what survived the crash, not by the node's memory of the late copy",
	joins[1]: "a match's third settlement crashes a node and is retried, and Recover completes what the crash cut short: " +
		"third-kind alone never repeats nor faults a third, so only here must what survived the crash tell a third from its sibling",
}

// Property names a property props checks. The names live here so designs in
// impls/ (which may not import props) can declare their expected verdicts.
type Property = engine.Property

// Properties names the properties, one field each, in report order; the
// list itself is World.Properties. Fields of one value, as Families, for the
// same budget of names.
var Properties = struct {
	NoDup, NoLoss, NoCrossRoom, NoBlocking, BoundedState, HonestAck, ExactAmount, Responsive Property
}{
	NoDup: "NoDup", NoLoss: "NoLoss", NoCrossRoom: "NoCrossRoom", NoBlocking: "NoBlocking",
	BoundedState: "BoundedState", HonestAck: "HonestAck", ExactAmount: "ExactAmount", Responsive: "Responsive",
}

// properties lists every property in report order (World.Properties).
var properties = []Property{
	Properties.NoDup, Properties.NoLoss, Properties.NoCrossRoom, Properties.NoBlocking,
	Properties.BoundedState, Properties.HonestAck, Properties.ExactAmount, Properties.Responsive,
}

// Join combines families into one generator preset whose schedules have
// every listed family's features at once, e.g. Join(Late, Crash) is
// "late+crash". generate and parse accept joined names.
func Join(fs ...Family) Family { return engine.Join(fs...) }

// checkFamily reports whether f is a family of Families or a Join of them
// that can be generated; the error lists the valid names.
func checkFamily(f Family) error {
	if slices.Contains(families, f) {
		return nil // the common case, without splitting
	}
	var concurrent, faulty bool
	if parts := f.Parts(); len(parts) > 1 && slices.Contains(parts, Families.SmallScope) {
		return fmt.Errorf("family %q joins small-scope, which is an enumeration, not a generator preset", string(f))
	}
	if err := engine.CheckParts(f, families, "family"); err != nil {
		return err
	}
	for _, p := range f.Parts() {
		switch p {
		case Families.Concurrent:
			concurrent = true
		case Families.Crash, Families.StoreError, Families.TimeoutSuccess, Families.MultiNode:
			faulty = true
		}
	}
	if concurrent && faulty {
		return fmt.Errorf("family %q joins concurrent with a family that injects faults; a concurrent schedule has none (its attempt numbers are not deterministic under RunOptions.Free)", string(f))
	}
	return nil
}
