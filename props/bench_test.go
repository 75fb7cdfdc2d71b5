package props

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
)

// BenchmarkJudge judges every property on the history of one generated
// duplicate-family schedule (tens of deliveries): the checkers' share of a
// matrix cell's cost, next to faults.BenchmarkRun's.
func BenchmarkJudge(b *testing.B) {
	h := faults.Run(keyed, faults.World.Generate(faults.Families.Duplicate, 1), faults.RunOptions{})
	b.ReportMetric(float64(len(h.Events)), "events/history")
	b.ResetTimer()
	for b.Loop() {
		Judge(h)
	}
}

// BenchmarkShrink shrinks a failing crash-family schedule of the memo
// design (which credits a retry after a crash twice) to its minimum.
func BenchmarkShrink(b *testing.B) {
	var s faults.Schedule
	fails := func(s faults.Schedule) bool {
		return Judge(faults.Run(memo, s, faults.RunOptions{})).Outcome(faults.Properties.NoDup) == Fails
	}
	for seed := uint64(1); ; seed++ {
		if s = faults.World.Generate(faults.Families.Crash, seed); fails(s) {
			break
		}
	}
	b.ReportMetric(float64(len(s.Deliveries)), "deliveries/schedule")
	b.ResetTimer()
	for b.Loop() {
		shrink(s, fails, 0)
	}
}
