//go:build race

package props

// raceEnabled: this test binary runs under the race detector.
const raceEnabled = true
