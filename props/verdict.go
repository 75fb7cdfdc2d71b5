package props

import "github.com/onceproof/onceproof/engine"

// Outcome is a property's verdict on one history, porcupine-style: a budget
// that ran out is its own outcome, never a pass (engine.Outcome).
type Outcome = engine.Outcome

// The outcomes (see engine.Outcome).
const (
	Holds     = engine.Holds
	Fails     = engine.Fails
	Unknown   = engine.Unknown
	NotJudged = engine.NotJudged
)

// Anomaly is one violation of a property: the settlement (Msg), the events
// and deliveries involved, the place in the schedule, and one line of
// explanation a reviewer can read without the code.
type Anomaly = engine.Anomaly

// Verdict is one property's judgement of one history.
type Verdict = engine.Verdict

// Report is every property's verdict on one history, in faults.Properties
// order.
type Report = engine.Report
