package faults_test

import (
	"math/bits"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// oneBitPairs returns, per identity field (player, match, kind), how many
// pairs of s's settlements differ in exactly one bit of the identity, by the
// position of that bit.
func oneBitPairs(s faults.Schedule, into map[string][]int) {
	sts := s.Settlements
	for i := range sts {
		for j := i + 1; j < len(sts); j++ {
			a, b := sts[i], sts[j]
			dp, dm, dk := uint64(a.Player^b.Player), a.Match^b.Match, uint64(a.Kind^b.Kind)
			if bits.OnesCount64(dp)+bits.OnesCount64(dm)+bits.OnesCount64(dk) != 1 {
				continue
			}
			for _, f := range []struct {
				name string
				d    uint64
			}{{"player", dp}, {"match", dm}, {"kind", dk}} {
				if f.d != 0 {
					into[f.name][bits.TrailingZeros64(f.d)]++
				}
			}
		}
	}
}

// TestWideIDsDifferInEveryBitOverACell: over the schedules one default
// cell of wide-ids runs, for every bit position of the player id (32) and
// the match id (64), and bit 0 of the kind, two settlements differ in that
// bit alone: a key that drops or truncates any of them collides somewhere
// in the cell.
func TestWideIDsDifferInEveryBitOverACell(t *testing.T) {
	f := faults.Families.WideIDs
	n := faults.World.Runs(f, engine.DefaultMatrixN)
	got := map[string][]int{"player": make([]int, 32), "match": make([]int, 64), "kind": make([]int, 8)}
	for k := range n {
		oneBitPairs(faults.World.Generate(f, engine.DefaultMatrixSeed+uint64(k)), got)
	}
	t.Logf("one-bit pairs by position over seeds %d..%d: %v", engine.DefaultMatrixSeed, engine.DefaultMatrixSeed+uint64(n)-1, got)
	want := map[string]int{"player": 32, "match": 64, "kind": 1}
	for field, width := range want {
		for b := range width {
			if got[field][b] == 0 {
				t.Errorf("%s bit %d: no two settlements of the %d schedules (seeds %d..%d) of %s differ in it alone; see them with go test ./faults -run TestGeneratorsArePinned -show %s:SEED",
					field, b, n, engine.DefaultMatrixSeed, engine.DefaultMatrixSeed+uint64(n)-1, f, f)
			}
		}
	}
}
