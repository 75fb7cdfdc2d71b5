package faults

import "github.com/onceproof/onceproof/engine"

// Schedule is one run of the world, as data: it prints to text (format) and
// parses back (parse), so a counterexample is a file you can read, diff, edit
// and replay. The Frame holds the family, the nodes, the deliveries (each
// naming a settlement by its index: Delivery.Msg), the faults and the
// sender; the settlements are the ground truth.
type Schedule struct {
	engine.Frame
	// Settlements is the ground truth; Settlements[i].ID == i.
	Settlements []Settlement
}

// Delivery is one planned arrival of a settlement (Msg, its index) at a
// node.
type Delivery = engine.Delivery

// FaultKind is what happens at a fault point.
type FaultKind = engine.FaultKind

// The fault kinds (see engine.FaultKind).
const (
	CrashBefore  = engine.CrashBefore
	CrashAfter   = engine.CrashAfter
	FailBefore   = engine.FailBefore
	TimeoutAfter = engine.TimeoutAfter
)

// Fault is injected at one effect (env.Durable or env.Credit call) of one
// attempt, or of one Recover call (see engine.Fault). A crash whose Effect
// is at or past the number of effects a Deliver made fires after it
// returned: the ack is lost (the "after commit, before ack" point).
type Fault = engine.Fault

// Recovery is the Fault.Attempt of the r-th Recover call of a run.
func Recovery(r int) int { return engine.Recovery(r) }

// RecoveryOf is the Recover call a Fault.Attempt < 0 names.
func RecoveryOf(attempt int) int { return engine.RecoveryOf(attempt) }
