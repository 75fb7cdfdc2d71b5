package props

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// World is the settlement subject as the engine runs it: faults.World
// (families, schedules, runner and coverage) with this package's
// properties (Judge, describeProperty) and renderings. RunMatrix, Check,
// TestDesign and the command run it.
var World = func() engine.World[faults.Design, faults.Schedule, faults.Detail] {
	w := faults.World
	w.Judge = func(h engine.History[faults.Schedule, faults.Detail]) engine.Report {
		return Judge(faults.History(h))
	}
	w.Describe = describeProperty
	w.GroundTruth = groundTruth
	w.EventText = eventText
	w.Participants = participants
	w.MermaidLine = mermaidLine
	return w.Complete()
}()
