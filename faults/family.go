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
// exported names (issue 21) and the families alone are 18: a caller writes
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
	// Pause: a node freezes in the middle of a call (a GC stall, SIGSTOP)
	// past the window ttl or past every lease, while the sender's retries
	// and a late copy land on the other nodes (and, half the time, a node
	// rebuilt meanwhile runs Recover); then the call resumes and finishes
	// what it started, on what it knew before it froze (gen_pause.go).
	Pause Family
	// InNode: copies of a settlement, and distinct settlements of one
	// player, reach one node at one instant, and the node handles them at
	// once, a goroutine each, as the Go runtime interleaves them
	// (engine.RunOptions.InNode). Run only when named (see sampled).
	InNode Family
}{
	Clean: "clean", Duplicate: "duplicate", Late: "late", DeepReplay: "deep-replay",
	Interleave: "interleave", WindowExpiry: "window-expiry", Crash: "crash",
	StoreError: "store-error", TimeoutSuccess: "timeout-after-success",
	MultiNode: "multi-node", Concurrent: "concurrent", SequenceRewind: "sequence-rewind",
	ThirdKind: "third-kind", RoomReturn: "room-return", WideIDs: "wide-ids",
	LongHistory: "long-history", SmallScope: "small-scope", Pause: "pause", InNode: "in-node",
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
	Families.Pause:          "a node freezes mid-call past the window or every lease while other nodes finish or recover the settlement, then resumes",
	Families.InNode:         "copies and distinct settlements of one player at one instant on one node, handled at once on goroutines the Go runtime interleaves: a sampled search, reproducible only by chance (go test runs it in bubbles; onceproof matrix -families in-node without)",
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
	Families.RoomReturn, Families.WideIDs, Families.LongHistory, Families.SmallScope, Families.Pause,
}

// sampled are the families whose runs the Go runtime interleaves, run
// only when named (TestDesign's Families, the CLI's -family): not columns
// of the matrix, whose committed cells regenerate byte for byte and a run
// of which does not replay from its schedule; and not TestDesign's
// default, because a node whose memory is not safe for concurrent calls
// (a map two calls write at once) is a fatal error of the Go runtime
// there, which no recover stops, rather than a verdict.
var sampled = []Family{Families.InNode}

// joins are the settlement world's joined families (engine.World.Joins),
// each for a case no part makes alone, which its doc says. The last four
// close issue 26's audit, that every settlement kind be delivered on
// several nodes and hit by every fault kind: crash and
// timeout-after-success run on one node and multi-node injects only
// failures before the first effect, so no column crashed or timed out a
// settlement spread over nodes; third-kind alone injects nothing, and
// third-kind+crash only crashes; pause has instants and finals only. Each
// is one column (about what a plain column costs: a few hundred runs of
// small schedules a design), so the crash and timeout joins take
// third-kind in too, one column each for every kind spread over nodes,
// rather than a pair per kind.
var joins = []Family{
	Join(Families.Late, Families.Crash), Join(Families.ThirdKind, Families.Crash),
	Join(Families.ThirdKind, Families.MultiNode, Families.Crash),
	Join(Families.ThirdKind, Families.MultiNode, Families.TimeoutSuccess),
	Join(Families.ThirdKind, Families.StoreError),
	Join(Families.ThirdKind, Families.Pause),
}

var joinDocs = map[Family]string{
	joins[0]: "a late settlement crashes a node and is retried after the player's next match started: " +
		"a retry that must be told from a new settlement by what survived the crash, not by the node's memory of the late copy",
	joins[1]: "a match's third settlement crashes a node and is retried, and Recover completes what the crash cut short: " +
		"third-kind alone never repeats nor faults a third, so only here must what survived the crash tell a third from its sibling",
	joins[2]: "a settlement of any kind crashes a node and is retried or recovered on another one while a copy sits on a third: " +
		"crash runs one node and multi-node crashes none, so only here does another node finish what a crash cut short",
	joins[3]: "a settlement of any kind takes effect on one node, which is told it timed out, and its retry lands on another: " +
		"timeout-after-success runs one node, so only here must another node finish, or answer for, an effect it did not see happen",
	joins[4]: "a match's third settlement meets failing store and sink calls and outages: " +
		"store-error has no third kind and third-kind no failure, so only here is a failed write of a third retried",
	joins[5]: "a node freezes in the middle of a match's third settlement while other nodes finish or recover it, then resumes: " +
		"pause has no third kind, so only here does a third meet a call that resumes on what it knew before it froze",
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
	if slices.Contains(families, f) || slices.Contains(sampled, f) {
		return nil // the common case, without splitting
	}
	var concurrent, inNode, faulty bool
	if parts := f.Parts(); len(parts) > 1 && slices.Contains(parts, Families.SmallScope) {
		return fmt.Errorf("family %q joins small-scope, which is an enumeration, not a generator preset", string(f))
	}
	if err := engine.CheckParts(f, append(slices.Clip(families), sampled...), "family"); err != nil {
		return err
	}
	for _, p := range f.Parts() {
		switch p {
		case Families.Concurrent:
			concurrent = true
		case Families.InNode:
			inNode = true
		case Families.Crash, Families.StoreError, Families.TimeoutSuccess, Families.MultiNode, Families.Pause:
			faulty = true
		}
	}
	if inNode && (concurrent || faulty) {
		return fmt.Errorf("family %q joins in-node with concurrent or a family that injects faults; an in-node schedule has neither (its goroutines, not Switches, interleave it, and its attempt numbers are the runtime's)", string(f))
	}
	if concurrent && faulty {
		return fmt.Errorf("family %q joins concurrent with a family that injects faults; a concurrent schedule has none (its attempt numbers are not deterministic under RunOptions.Free)", string(f))
	}
	return nil
}
