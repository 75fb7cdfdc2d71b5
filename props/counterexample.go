package props

import "github.com/onceproof/onceproof/faults"

// propertyDocs is the one-line meaning of each property, for matrix.md.
var propertyDocs = map[faults.Property]string{
	faults.Properties.NoDup:        "no settlement is credited twice (never 多记)",
	faults.Properties.NoLoss:       "every settlement that arrived is credited once retries and recovery are done (never 少记)",
	faults.Properties.NoCrossRoom:  "a credit lands in the settlement's own room (不串房)",
	faults.Properties.NoBlocking:   "a first arrival is never held back waiting for another settlement (不阻塞新房)",
	faults.Properties.BoundedState: "what a node keeps stays within the bound it declares",
	faults.Properties.HonestAck:    "a node acks \"credited\" or \"already delivered\" only when the credit is in the ledger",
	faults.Properties.ExactAmount:  "every credit moves its settlement's net amount, for a settlement that exists (a debit stays a debit)",
	faults.Properties.Responsive:   "every Deliver and Recover returns and nothing of the design outlives the run: no panic, no deadlock, no stall (the watchdogs end a run that stops moving), no goroutine left running (seen in TestDesign's bubbles)",
}

// describeProperty is property p's one-line meaning.
func describeProperty(p faults.Property) string {
	if d, ok := propertyDocs[p]; ok {
		return d
	}
	return "not a property"
}
