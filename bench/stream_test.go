package bench

import "testing"

// BenchmarkStreamNext measures the harness alone: the loop of
// BenchmarkWindowPut with no window (Next and Record), at the issue's
// reference size. Every BenchmarkWindowPut figure includes this much; its
// ratios to ref are of totals, harness included (a conservative ratio: the
// harness adds the same time to both sides).
func BenchmarkStreamNext(b *testing.B) {
	const live = 131072
	s := NewStream(0, live, Step)
	for range WarmOps(live) {
		s.Next()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		_, _, retry := s.Next()
		s.Record(retry, retry)
	}
}
