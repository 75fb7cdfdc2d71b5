package zz

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
)

func BenchmarkRef(b *testing.B) {
	for _, f := range []faults.Family{faults.Clean, faults.Crash, faults.DeepReplay} {
		var ss []faults.Schedule
		n := 0
		for seed := range uint64(64) {
			s := faults.Generate(f, seed)
			ss = append(ss, s)
			n += len(s.Deliveries)
		}
		b.Run("family="+string(f), func(b *testing.B) {
			i := 0
			for b.Loop() {
				faults.Run(refdesign.Design{}, ss[i%64], faults.RunOptions{})
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(n)/64, "deliveries/schedule")
		})
	}
}
