package impls_test

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
)

// BenchmarkDeliver runs every design on one standard schedule (the largest
// duplicate-family schedule of seeds 1..64, about 35 deliveries: first
// arrivals plus close copies, no faults) through the deterministic runner,
// and reports the cost per delivery attempt, runner included, so
// `benchstat -col /design` lines designs up.
func BenchmarkDeliver(b *testing.B) {
	var s faults.Schedule
	for seed := uint64(1); seed <= 64; seed++ {
		if g := faults.Generate(faults.Duplicate, seed); len(g.Deliveries) > len(s.Deliveries) {
			s = g
		}
	}
	for _, d := range impls.All() {
		b.Run("design="+d.Name(), func(b *testing.B) {
			attempts := 0
			for b.Loop() {
				h := faults.Run(d, s, faults.RunOptions{})
				for _, e := range h.Events {
					if e.Kind == faults.EvArrive {
						attempts++
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(attempts), "ns/attempt")
		})
	}
}
