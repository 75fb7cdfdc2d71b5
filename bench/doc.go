// Package bench measures onceproof's hot paths against the caches a team
// would reach for instead (ristretto, otter, golang-lru's expirable LRU, and
// a hand-written generational Go map) and against the window of the design
// "sharded" (impls/sharded's MapWindow), on one workload (Stream), in Go
// benchmark format so benchstat lines them up. Each Benchmark's doc says
// what it measures; BenchmarkWindowPut's says what its metrics mean and how
// the caches' clocks are made comparable. Run: make bench (writes
// results/bench/new.txt), make bench-compare (benchstat against the
// committed baseline), make bench-summary (rewrites results/bench/summary.md
// from the baseline with benchsummary).
package bench
