package props

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// shrink reduces a schedule on which fails is true to a smaller one on which
// it is still true (engine.Shrink): settlements, deliveries, faults and
// scheduler choices dropped, nodes folded, faults moved earlier, gaps
// closed, players, rooms and matches renamed to small values. When s is a
// world that can happen (World.CheckWorld), so is the result. It is
// deterministic.
func shrink(s faults.Schedule, fails func(faults.Schedule) bool, budget int) faults.Schedule {
	return engine.Shrink(World, s, fails, budget)
}
