package foursig_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// The world's return gap (faults.MinReturnGap), checked against four-sig's
// window: outside room-return, a player who re-enters a room must not meet
// that room's old signatures in the window, or every family would fail
// four-sig for room-return's reason and its columns would say nothing about
// the rest of its rules.
//
// A return restarts the room's rounds, so the return match can carry the
// (room, round, net, final) of the match that left the room. That old
// signature is out of a FIFO of Capacity once Capacity newer signatures of
// the player arrived before the return's first one. A gap of g matches
// elsewhere brings g x k of them (k settlements per match); late and
// interleaved arrivals each move one settlement by less than a match, which
// with one of them in play keeps g x k, but with both joined can take one
// match's worth minus one away: (g-1) x k + 1.
func TestWorldKeepsQuickReturnsOutOfTheWindow(t *testing.T) {
	for _, f := range families() {
		g := faults.MinReturnGap(f)
		k := 2
		if slices.Contains(f.Parts(), faults.Families.ThirdKind) {
			k = 3
		}
		newer := g * k
		if slices.Contains(f.Parts(), faults.Families.Late) && slices.Contains(f.Parts(), faults.Families.Interleave) {
			newer = (g-1)*k + 1
		}
		if newer < foursig.Capacity {
			t.Errorf("%s: a return %d matches later leaves only %d newer signatures, fewer than the window's %d: raise faults.DefaultReturnGap or redo this derivation", f, g, newer, foursig.Capacity)
		}
	}
}

// The same, on the generated schedules: between two distinct settlements
// of one player with equal signatures, at least Capacity others of the
// player arrive first, in every family but the two that collide on purpose
// (room-return, third-kind: a third kind paying what its sibling pays).
func TestGeneratedReturnsMeetNoLiveSignature(t *testing.T) {
	for _, f := range families() {
		if slices.Contains(f.Parts(), faults.Families.ThirdKind) {
			continue
		}
		for seed := uint64(1); seed <= 200; seed++ {
			s := faults.World.Generate(f, seed)
			first := map[int]int{} // settlement -> index of its first arrival among all first arrivals
			var order []int
			for _, d := range s.Deliveries {
				if _, ok := first[d.Msg]; !ok {
					first[d.Msg] = len(order)
					order = append(order, d.Msg)
				}
			}
			type sig struct {
				room, round uint32
				net         int64
				final       bool
			}
			last := map[uint32]map[sig]int{} // player -> signature -> position among the player's arrivals
			count := map[uint32]int{}
			for _, id := range order {
				st := s.Settlements[id]
				sg := sig{st.Room, st.Round, st.Net, st.Final}
				if last[st.Player] == nil {
					last[st.Player] = map[sig]int{}
				}
				if pos, ok := last[st.Player][sg]; ok && count[st.Player]-pos-1 < foursig.Capacity {
					t.Fatalf("%s seed %d: s%d has the signature of a settlement only %d arrivals before it (< %d): go test ./impls/foursig -run TestGeneratedReturnsMeetNoLiveSignature\n%s",
						f, seed, id, count[st.Player]-pos-1, foursig.Capacity, faults.World.Format(s))
				}
				last[st.Player][sg] = count[st.Player]
				count[st.Player]++
			}
		}
	}
}

// families is every family but room-return, and the joins that change the
// gap.
func families() []faults.Family {
	var out []faults.Family
	for _, f := range faults.World.Families {
		if f != faults.Families.RoomReturn {
			out = append(out, f)
		}
	}
	out = append(out, faults.Join(faults.Families.Late, faults.Families.Interleave))
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
