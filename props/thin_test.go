package props

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
)

// The designs below are the catches issue 26 found thin: each held every
// family on the generators before wide-ids flipped every bit position and
// long-history had its deep schedule, and each fails now in the family
// that exists for it.

// judgeUnshrunk judges d's cell of family f as judge does (the same
// schedules, the same properties), without shrinking: a counterexample
// found on the deep schedule's 100,000 settlements would shrink for
// minutes, and these tests ask only whether the cell fails.
func judgeUnshrunk(t *testing.T, d faults.Design, f faults.Family) Cell {
	t.Helper()
	c := Cell{Design: d.Name(), Family: f, Seed: engine.DefaultMatrixSeed}
	failed := map[faults.Property]bool{}
	for k := range World.Runs(f, engine.DefaultMatrixN) {
		r := World.Judge(World.Run(d, World.Generate(f, c.Seed+uint64(k)), faults.RunOptions{}))
		c.Runs++
		if r.Unknown() {
			c.Unknown++
		}
		for _, p := range r.Failed() {
			failed[p] = true
		}
	}
	for _, p := range World.Properties {
		if failed[p] {
			c.Failed = append(c.Failed, p)
		}
	}
	return c
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
	skipUnderRace(t)
	// The store is the only memory of what was credited (unkeyed credits)
	// and keeps a player's last 2,048 records: the plain schedules'
	// replays reach at most 1,000 matches (2,000 settlements) back, the
	// deep schedule's replay of its first match 99,998.
	d := tiny{name: "store-caps-2048", unkeyed: true, capPerPlayer: 2048}
	wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoDup, "the deep schedule's replay of the first match")
}

func TestKitFailsAStoreThatForgetsPast4096Settlements(t *testing.T) {
	skipUnderRace(t)
	// A window in front of a store that forgets what is older than 4,096
	// settlements: a far replay is past the window whatever it keeps, so
	// the store's slack is what decides, and with one player a store of
	// the last 4,096 records is that design. The plain schedules' longest
	// history is about 2,300 settlements.
	d := tiny{name: "store-forgets-past-4096", unkeyed: true, capPerPlayer: 4096}
	wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoDup, "the deep schedule's 100,000 settlements")
}

func TestKitFailsAFingerprintKeptTo20Bits(t *testing.T) {
	skipUnderRace(t)
	// A fingerprint (a hash of the identity) cut to b bits collides by the
	// birthday bound: n keys make about n^2/2^(b+1) colliding pairs, and a
	// collision drops the later settlement as a duplicate (NoLoss). The
	// deep schedule's 100,000 keys make 4,768 pairs at b = 20: caught
	// whatever the hash, FNV-1a's too, whose low bits are far from
	// uniform over these keys (TestKitFailsAFingerprintCutTo24To32Bits).
	d := tiny{name: "fingerprint-20-bits", key: func(s faults.Settlement) string {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%d/%d", s.Player, s.Match, s.Kind)
		return fmt.Sprint(h.Sum64() & (1<<20 - 1))
	}}
	wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoLoss, "the deep schedule's 100,000 keys, 4,768 colliding pairs expected at 20 bits")
}

func TestKitFailsAFingerprintCutTo24To32Bits(t *testing.T) {
	skipUnderRace(t)
	// The reference's key (refdesign.KeyOf: source 000's fingerprint,
	// SHA-256 of the identity) cut to b bits. Among n uniform keys the
	// colliding pairs are about Poisson with mean n^2/2^(b+1), so a cell
	// catches the cut with probability 1 - e^-(n^2/2^(b+1)), and only the
	// deep schedule counts: its n = 100,000 keys give a mean of 298 at
	// b = 24, 18.6 at 28 and 1.16 at 32, where the nine plain schedules,
	// 2,300 keys each, give 9 x 2,300^2/2^33 = 0.006 at 32. So a cut to
	// 24 or 28 bits of any hash that spreads its keys is caught
	// (1 - e^-18.6 = 1 - 8e-9), and one to 32 bits 69 times in 100: the
	// kit promises 28 bits, and the 32-bit catch is this hash's on this
	// schedule (it has 307, 16 and 2 colliding pairs). FNV-1a cut the same
	// way has 672, 34 and 0: its low bits are not uniform over keys that
	// differ in a few decimal digits, so this test uses a hash the bound
	// holds for.
	for _, b := range []int{24, 28, 32} {
		d := tiny{name: fmt.Sprintf("fingerprint-%d-bits", b), key: func(s faults.Settlement) string {
			return fmt.Sprint(refdesign.KeyOf(s).Lo & (1<<b - 1))
		}}
		wantFails(t, judgeUnshrunk(t, d, faults.Families.LongHistory), faults.Properties.NoLoss, fmt.Sprintf("the deep schedule's 100,000 keys, %.3g colliding pairs expected at %d bits", 1e10/float64(uint64(1)<<(b+1)), b))
	}
}
