package engine

import "time"

// Limits on every dimension of a schedule. ValidateFrame (hence every
// world's Parse and Run) rejects a schedule past any of them with one line
// naming the limit, so a hand-edited or hostile file fails fast instead of
// exhausting memory (a file that said "nodes 99999999999" made Run
// allocate a node per id). Each limit is derived from what a run can use;
// change one only with its derivation.
const (
	// MaxNodes bounds Frame.Nodes. Run builds every node up front (a
	// design's whole memory each), and a counterexample needs at most 3
	// (two contenders and a retry target; generators draw 1..3). 64
	// covers any fleet a test means to model at a bounded cost.
	MaxNodes = 64

	// MaxDeliveries bounds the planned deliveries. The largest generated
	// schedule is settlement's deep long-history (100,000 settlements, each
	// delivered at least once, and a few dozen copies); 1<<18 = 262,144 is
	// 2.6 times that and still bounds what a hostile file makes Run hold
	// (a delivery is a few dozen bytes: under 16 MB). Each delivery is at
	// least two events (its arrival and its answer, crash or panic), so a
	// schedule past DefaultMaxEvents/2 deliveries needs the larger budget
	// its world's Run gives it (RunOptions.MaxEvents; faults.Run scales it
	// with the deliveries).
	MaxDeliveries = 1 << 18

	// MaxMsgs bounds a world's messages: a message that no delivery names
	// is inert, so there is no use for more than MaxDeliveries.
	MaxMsgs = MaxDeliveries

	// MaxFaults bounds the faults: a fault fires at most once, in one
	// attempt, and an attempt is at least two events, so past
	// DefaultMaxEvents/2 faults most could not fire within the default
	// budget (generated schedules draw at most a few dozen).
	MaxFaults = DefaultMaxEvents / 2

	// MaxAttemptIndex bounds Fault.Attempt and MaxEffectIndex Fault.Effect:
	// attempts are numbered in the order they run, the planned deliveries
	// first in time order with the retries among them, so a fault on any
	// planned delivery of the largest schedule, or on as many retries
	// again, is below 2 x MaxDeliveries; a design makes a handful of env
	// calls per attempt (ref makes 3), and 1024 leaves room for any design
	// that still terminates.
	MaxAttemptIndex = 2 * MaxDeliveries
	MaxEffectIndex  = 1024

	// MaxSwitches bounds Frame.Switches: each choice is made at a
	// scheduling point (an attempt's start or an env call), which records at
	// least one event, so no run uses more than DefaultMaxEvents choices.
	MaxSwitches = DefaultMaxEvents

	// MaxAttempts bounds Frame.MaxAttempts, the sender's sends per message:
	// generated schedules use 16; 1024 sends of one message is already past
	// any at-least-once sender worth modelling, and every send costs events
	// of the run's budget.
	MaxAttempts = 1024

	// MaxAt bounds a delivery's time, MaxRetryAfter the sender's retry
	// interval and MaxPause a Pause. Virtual times are time.Durations from
	// Epoch (int64 nanoseconds: they overflow at about 292 years). The last
	// event of a run is at most MaxAt + MaxFaults x MaxPause + DrainAfter +
	// 2 x MaxAttempts x MaxRetryAfter = 10,000 h + 32,768 h + 1 h + 2,048 h,
	// about 5 years: designs may add leases and ttls of decades to it
	// without overflowing. Generated schedules span seconds to minutes, and
	// a pause needs only to outlast a lease (tens of seconds).
	MaxAt         = 10000 * time.Hour
	MaxRetryAfter = time.Hour
	MaxPause      = time.Hour
)
