package props

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// DefaultShrinkBudget is how many candidate schedules Shrink tries when the
// caller gives no budget (see engine.DefaultShrinkBudget).
const DefaultShrinkBudget = engine.DefaultShrinkBudget

// Shrink reduces a schedule on which fails is true to a smaller one on which
// it is still true (engine.Shrink): settlements, deliveries, faults and
// scheduler choices dropped, nodes folded, faults moved earlier, gaps
// closed, players, rooms and matches renamed to small values. When s is a
// world that can happen (faults.CheckWorld), so is the result. It is
// deterministic.
func Shrink(s faults.Schedule, fails func(faults.Schedule) bool, budget int) faults.Schedule {
	return engine.Shrink(World, s, fails, budget)
}
