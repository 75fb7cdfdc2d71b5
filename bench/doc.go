// Package bench measures onceproof's hot paths against the caches a team
// would reach for instead (ristretto, otter, golang-lru's expirable LRU, and
// a hand-written generational Go map) and against the window of the design
// "sharded" (impls/sharded's MapWindow), on one workload, in Go benchmark
// format so benchstat lines them up:
//
//	BenchmarkWindowPut/impl=NAME/live=N          one goroutine
//	BenchmarkWindowPutParallel/impl=NAME/live=N  b.RunParallel on all cores
//	BenchmarkWindowLookup                        ref.Window.Lookup on a hit
//	BenchmarkSettle/path=fresh|windowdup|storedup  ref.Settler.Settle
//	BenchmarkStreamNext                          the WindowPut loop without a window
//	BenchmarkDesign/design=NAME/schedule=S       every design of impls.All through faults.Run
//
// The workload (Stream) is one deterministic stream of 64-bit fingerprints:
// 90% fresh, 10% retries of one of the last N/2 fresh keys (always inside the
// ttl), with virtual time advancing by a fixed step per operation so that the
// live set (distinct keys put within the last ttl) stays at N.
//
// Metrics besides ns/op, B/op and allocs/op:
//   - bytes/live-entry: for ref, Window.MemoryBytes()/N; for every other
//     implementation the growth of runtime.MemStats.HeapAlloc (after a GC on
//     each side) across building the instance and running it to steady state,
//     divided by N. The stream's own buffers are allocated before the first
//     reading and are not counted.
//   - catch-rate: caught retries / retries, counted from the end of the first
//     ttl of warm-up (when the live set is full) to the end of the timed loop,
//     so that it is defined even with -benchtime=1x. Every retry is inside the
//     ttl, so an exact window scores 1: BenchmarkWindowPut fails an exact
//     implementation (ref, gomap) that scores less, or that reports a fresh
//     key as existing. The Parallel variant fails only on the latter: its
//     goroutines run on their own virtual clocks (kept together by
//     Stream.Sync), and a goroutine the OS deschedules between reading its
//     clock and locking comes back further behind than the window's grace
//     period, which here is microseconds of real time; so a few retries can be
//     missed there without a bug (catch-rate shows how many).
//
// Clocks: ref, gomap and otter (through its Clock option) run on the
// stream's virtual time. ristretto and golang-lru read the wall clock
// internally and cannot be given another; their ttl is set to an hour (longer
// than any run, so it never expires an entry) and their capacity to N, which
// bounds their live set at N as the virtual ttl bounds the others'. On this
// workload (fixed time step per operation) "the last ttl" and "the last N
// fresh keys" are the same set, so the comparison is like for like.
//
// Run: make bench (writes results/bench/new.txt), make bench-compare
// (benchstat against the committed baseline), make bench-summary (rewrites
// results/bench/summary.md from the baseline with benchsummary).
package bench
