package faults_test

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// TestLongHistoryCellRunsADeepScheduleReplayingTheFirstMatch: a default
// long-history cell (seeds DefaultMatrixSeed.. for Runs schedules) runs a
// schedule of at least 100,000 settlements of one player, not player 1,
// that delivers a settlement of the player's first match again after
// every other settlement's first arrival: what a store that keeps a
// player's last 2,048 records, or forgets past 4,096 settlements, must
// meet to fail, and enough keys for a fingerprint cut to 32 bits to
// collide (gen_long.go's deepSettlements).
func TestLongHistoryCellRunsADeepScheduleReplayingTheFirstMatch(t *testing.T) {
	f := faults.Families.LongHistory
	n := faults.World.Runs(f, engine.DefaultMatrixN)
	for k := range n {
		seed := engine.DefaultMatrixSeed + uint64(k)
		s := faults.World.Generate(f, seed)
		if len(s.Settlements) < 100_000 {
			continue
		}
		for _, st := range s.Settlements {
			if st.Player != s.Settlements[0].Player {
				t.Fatalf("seed %d: the deep schedule has players %d and %d; its history is one player's (go test ./faults -run TestGeneratorsArePinned -show %s:%d)", seed, s.Settlements[0].Player, st.Player, f, seed)
			}
		}
		if p := s.Settlements[0].Player; p == 1 {
			t.Errorf("seed %d: the deep schedule's player is 1; the player id is drawn (go test ./faults -run TestGeneratorsArePinned -show %s:%d)", seed, f, seed)
		}
		var lastFirst engine.Delivery
		seen := map[int]bool{}
		for _, d := range s.Deliveries {
			if !seen[d.Msg] {
				seen[d.Msg] = true
				lastFirst = d
			}
		}
		for _, d := range s.Deliveries {
			if d.At > lastFirst.At && s.Settlements[d.Msg].Match == s.Settlements[0].Match {
				return
			}
		}
		t.Fatalf("seed %d: %d settlements, no replay of the first match (%d) after the last first arrival at %s (go test ./faults -run TestGeneratorsArePinned -show %s:%d)",
			seed, len(s.Settlements), s.Settlements[0].Match, lastFirst.At, f, seed)
	}
	t.Fatalf("no schedule of seeds %d..%d of %s has 100,000 settlements", engine.DefaultMatrixSeed, engine.DefaultMatrixSeed+uint64(n)-1, f)
}
