package props

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// The designs below are the catches issue 26 found thin: each held every
// family on the generators before wide-ids flipped every bit position and
// long-history had its deep schedule, and each fails now in the family
// that exists for it.

// judgeUnshrunk runs d's cell of family f as judge does, but keeps the
// first counterexample as found: shrinking one of the deep schedule's
// 8,192 settlements costs minutes, and these tests ask only whether the
// cell fails.
func judgeUnshrunk(t *testing.T, d faults.Design, f faults.Family) Cell {
	t.Helper()
	return engine.Check(World, d, MatrixOptions{Families: []faults.Family{f}, ShrinkBudget: 1}).Cells[0]
}

func TestKitFailsAKeyThatKeeps48BitsOfTheMatchID(t *testing.T) {
	// Before, wide-ids' match pairs flipped bits below 41 only: a key
	// that keeps 48 bits (or 56, 63) never collided.
	for _, b := range []int{48, 56, 63} {
		d := tiny{name: fmt.Sprintf("key-match-%d-bits", b), key: func(s faults.Settlement) string {
			return fmt.Sprintf("%d/%d/%d", s.Player, s.Match&(1<<b-1), s.Kind)
		}}
		wantFails(t, judge(t, d, faults.Families.WideIDs), faults.Properties.NoLoss, "wide-ids flipping match bits 41..63")
	}
}

func TestKitFailsAStoreCappedAt2048PerPlayer(t *testing.T) {
	// The store is the only memory of what was credited (unkeyed credits)
	// and keeps a player's last 2,048 records: the plain schedules'
	// replays reach at most 1,000 matches (2,000 settlements) back, the
	// deep schedule's replay of its first match 8,190.
	d := tiny{name: "store-caps-2048", unkeyed: true, capPerPlayer: 2048}
	wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoDup, "the deep schedule's replay of the first match")
}

func TestKitFailsAStoreThatForgetsPast4096Settlements(t *testing.T) {
	// A window in front of a store that forgets what is older than 4,096
	// settlements: a far replay is past the window whatever it keeps, so
	// the store's slack is what decides, and with one player a store of
	// the last 4,096 records is that design. The plain schedules' longest
	// history is about 2,300 settlements.
	d := tiny{name: "store-forgets-past-4096", unkeyed: true, capPerPlayer: 4096}
	wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoDup, "the deep schedule's 8,192 settlements")
}

func TestKitFailsAFingerprintKeptTo20Bits(t *testing.T) {
	// A fingerprint (a hash of the identity, as source 000's is) cut to b
	// bits collides by the birthday bound: n keys make about n^2/2^(b+1)
	// colliding pairs, and a collision drops the later settlement as a
	// duplicate (NoLoss). The deep schedule's 8,192 keys make 32 pairs at
	// b = 20 (caught whatever the hash), 2 at 24, 0.125 at 28 and 0.008 at
	// 32: a cut to 24 bits or more is caught by chance or not at all, and
	// 32 bits would need ~2^17 keys of one cell (about 3 expected pairs)
	// to be caught reliably, which the matrix's budget does not hold (the
	// deep schedule costs ~0.2 s a design at 8,192). So the kit promises
	// 20 bits, and this test holds it to that.
	d := tiny{name: "fingerprint-20-bits", key: func(s faults.Settlement) string {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%d/%d", s.Player, s.Match, s.Kind)
		return fmt.Sprint(h.Sum64() & (1<<20 - 1))
	}}
	wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoLoss, "the deep schedule's 8,192 keys, 32 colliding pairs expected at 20 bits")
}
