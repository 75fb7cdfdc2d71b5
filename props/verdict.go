package props

import "github.com/onceproof/onceproof/engine"

// Outcome is a property's verdict on one history, porcupine-style: a budget
// that ran out is its own outcome, never a pass (engine.Outcome).
type Outcome = engine.Outcome

// The outcomes, with the engine's values (a change there breaks the
// array lengths below).
const (
	// Holds: the history satisfies the property.
	Holds Outcome = 0
	// Fails: the history violates the property; Verdict.Anomalies says
	// where.
	Fails Outcome = 1
	// Unknown: the run's budget ran out before the history could show the
	// property holds.
	Unknown Outcome = 2
	// NotJudged: the design gives the property nothing to judge (no state
	// reports for BoundedState: it does not implement faults.Bounded).
	NotJudged Outcome = 3
)

var (
	_ [1]struct{} = [1 + Holds - engine.Holds]struct{}{}
	_ [1]struct{} = [1 + Fails - engine.Fails]struct{}{}
	_ [1]struct{} = [1 + Unknown - engine.Unknown]struct{}{}
	_ [1]struct{} = [1 + NotJudged - engine.NotJudged]struct{}{}
)

// Verdict is one property's judgement of one history.
type Verdict = engine.Verdict

// Report is every property's verdict on one history, in faults.Properties
// order.
type Report = engine.Report
