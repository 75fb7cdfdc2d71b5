//go:build race

package main

// raceEnabled: this test binary runs under the race detector, which
// allocates for its own bookkeeping, so allocation counts are not the
// program's.
const raceEnabled = true
