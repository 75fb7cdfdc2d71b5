package faults

import "github.com/onceproof/onceproof/engine"

// The limits a design author sizes a cluster and a schedule by (the
// engine derives them, and every other limit Validate applies:
// engine.MaxDeliveries, MaxFaults, ...). World.Validate (hence Parse and
// Run) rejects a schedule past any limit with one line naming it.
const (
	// MaxNodes is the most nodes a cluster has (engine.MaxNodes: a
	// counterexample needs at most 3, and 64 covers any fleet a test
	// models at a bounded cost).
	MaxNodes = 64
	// MaxSettlements is the most settlements a schedule has
	// (engine.MaxMsgs: a settlement no delivery names is inert, so no more
	// than the deliveries, 1<<18: 2.6 times the 100,000 of the largest
	// generated schedule, long-history's deep one).
	MaxSettlements = 1 << 18
)

// The values above are the engine's, written out so go doc shows them; a
// change to engine's makes one of these array lengths negative.
var (
	_ [MaxNodes - engine.MaxNodes]struct{}
	_ [engine.MaxNodes - MaxNodes]struct{}
	_ [MaxSettlements - engine.MaxMsgs]struct{}
	_ [engine.MaxMsgs - MaxSettlements]struct{}
)
