package faults

import "github.com/onceproof/onceproof/engine"

// Limits on every dimension of a schedule (see package engine, where each
// is derived). validate (hence parse and Run) rejects a schedule past any
// of them with one line naming the limit.
const (
	MaxNodes        = engine.MaxNodes
	MaxDeliveries   = engine.MaxDeliveries
	MaxSettlements  = engine.MaxMsgs
	MaxFaults       = engine.MaxFaults
	MaxAttemptIndex = engine.MaxAttemptIndex
	MaxEffectIndex  = engine.MaxEffectIndex
	MaxSwitches     = engine.MaxSwitches
	MaxAttempts     = engine.MaxAttempts
	MaxAt           = engine.MaxAt
	MaxRetryAfter   = engine.MaxRetryAfter
)
