package props

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// SchedFile is a saved counterexample: a schedule in faults' text form behind
// a header of comments naming the design it was found on and the properties
// it fails there (engine.SchedFile). The file is also a plain schedule that
// World.Parse reads.
type SchedFile = engine.SchedFile[faults.Schedule]

// ParseSchedFile reads what engine.FormatSchedFile wrote, or any schedule text
// (then Design and Fails are empty). A header naming an unknown property is
// an error: the file would otherwise replay against the wrong expectation.
func ParseSchedFile(text string) (SchedFile, error) { return engine.ParseSchedFile(World, text) }
