package faults

// Family is a fault family: a generator preset and a matrix column.
type Family string

// The fault families, in matrix column order.
const (
	Clean          Family = "clean"         // every settlement delivered once, in order
	Duplicate      Family = "duplicate"     // extra copies close together
	Late           Family = "late"          // a settlement arrives after the player's next match started
	DeepReplay     Family = "deep-replay"   // a queue replays settlements several matches old
	Interleave     Family = "interleave"    // the old match's final after the new match's instant
	WindowExpiry   Family = "window-expiry" // retries land just past the window ttl
	Crash          Family = "crash"         // node crashes at every fault point
	StoreError     Family = "store-error"   // durable ops and credits fail transiently
	TimeoutSuccess Family = "timeout-after-success"
	MultiNode      Family = "multi-node"      // retries land on another node
	Concurrent     Family = "concurrent"      // many identical deliveries at once, real goroutines
	SequenceRewind Family = "sequence-rewind" // the sender's counter restarts
	ThirdKind      Family = "third-kind"      // the business adds a third settlement per match
)

// Families lists every family in matrix column order.
var Families = []Family{
	Clean, Duplicate, Late, DeepReplay, Interleave, WindowExpiry, Crash,
	StoreError, TimeoutSuccess, MultiNode, Concurrent, SequenceRewind, ThirdKind,
}

// Property names a property props checks. The names live here so designs in
// impls/ (which may not import props) can declare their expected verdicts.
type Property string

const (
	NoDup        Property = "NoDup"
	NoLoss       Property = "NoLoss"
	NoCrossRoom  Property = "NoCrossRoom"
	NoBlocking   Property = "NoBlocking"
	BoundedState Property = "BoundedState"
	HonestAck    Property = "HonestAck"
)

// Properties lists every property in report order.
var Properties = []Property{NoDup, NoLoss, NoCrossRoom, NoBlocking, BoundedState, HonestAck}

// Expectation says which properties a design is expected to fail in each
// family; a family it does not name must hold everything.
type Expectation map[Family][]Property

// Expecter is a Design that declares its expected verdicts. A design without
// it is expected to hold everywhere.
type Expecter interface {
	Expected() Expectation
}
