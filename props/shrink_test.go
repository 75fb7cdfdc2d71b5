package props

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// wide is a schedule of 20 settlements over 3 nodes, each delivered twice,
// with a fault on every fifth attempt.
func wide() faults.Schedule {
	s := faults.Schedule{Frame: engine.Frame{Family: faults.Families.Duplicate, Nodes: 3, RetryAfter: time.Second, MaxAttempts: 10}}
	for i := 0; i < 20; i++ {
		s.Settlements = append(s.Settlements, faults.Settlement{
			ID: i, Player: uint32(100 + i%4), Room: uint32(50 + i%3), Match: uint64(1000 + i), Round: uint32(i % 5), Net: int64(i), Seq: uint64(7 + i),
		})
	}
	for i := 0; i < 40; i++ {
		s.Deliveries = append(s.Deliveries, engine.Delivery{At: time.Duration(5+i) * 100 * time.Millisecond, Msg: i % 20, Node: i % 3})
	}
	for i := 0; i < 40; i += 5 {
		s.Faults = append(s.Faults, engine.Fault{Attempt: i, Kind: engine.FailBefore})
	}
	return s
}

// collides is a stand-in for a design bug: it "fails" when two delivered
// settlements of one player share a room and a delivery of the later one
// lands on node 2.
func collides(s faults.Schedule) bool {
	delivered := map[int]bool{}
	for _, d := range s.Deliveries {
		delivered[d.Msg] = true
	}
	for _, d := range s.Deliveries {
		if d.Node != 2 {
			continue
		}
		b := s.Settlements[d.Msg]
		for id := range delivered {
			a := s.Settlements[id]
			if id < d.Msg && a.Player == b.Player && a.Room == b.Room {
				return true
			}
		}
	}
	return false
}

func TestShrinkFindsTheMinimalCollision(t *testing.T) {
	s := wide()
	if !collides(s) {
		t.Fatal("the starting schedule must fail")
	}
	got := shrink(s, collides, 0)
	// The minimum is two settlements of one player in one room, one delivery
	// each, the later one on node 2, no faults: renumbered to player 1, room
	// 1, starting at time zero.
	if len(got.Settlements) != 2 || len(got.Deliveries) != 2 || len(got.Faults) != 0 || got.Nodes != 3 {
		t.Errorf("Shrink left %d settlements, %d deliveries, %d faults, %d nodes; want 2, 2, 0, 3:\n%+v",
			len(got.Settlements), len(got.Deliveries), len(got.Faults), got.Nodes, got)
	}
	for _, st := range got.Settlements {
		if st.Player != 1 || st.Room != 1 {
			t.Errorf("settlement %+v not renumbered to player 1, room 1", st)
		}
	}
	if got.Deliveries[0].At != 0 {
		t.Errorf("first delivery at %v, want time zero", got.Deliveries[0].At)
	}
	if !collides(got) {
		t.Error("the shrunk schedule no longer fails")
	}
	if len(got.Deliveries) == 0 || faults.World.Validate(got) != nil {
		t.Errorf("the shrunk schedule is not a valid schedule: %+v", got)
	}
}

func TestShrinkIsDeterministic(t *testing.T) {
	a := shrink(wide(), collides, 0)
	b := shrink(wide(), collides, 0)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("two shrinks of the same schedule differ (-first +second):\n%s", diff)
	}
}

func TestShrinkStopsAtItsBudget(t *testing.T) {
	calls := 0
	fails := func(s faults.Schedule) bool { calls++; return collides(s) }
	shrink(wide(), fails, 7)
	if calls != 7 {
		t.Errorf("Shrink with budget 7 ran the predicate %d times", calls)
	}
}
