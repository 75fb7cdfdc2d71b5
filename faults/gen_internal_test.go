package faults

import (
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// traced draws a schedule of family f with its generation facts.
func traced(t *rapid.T, f Family) (Schedule, []pending) {
	var all []pending
	s := genSchedule(t, f, presetOf(f), &all)
	return s, all
}

// arrivals returns each settlement's delivery times and nodes.
func arrivals(s Schedule) (ats [][]time.Duration, nodes []map[int]bool) {
	ats = make([][]time.Duration, len(s.Settlements))
	nodes = make([]map[int]bool, len(s.Settlements))
	for _, d := range s.Deliveries {
		ats[d.Settlement] = append(ats[d.Settlement], d.At)
		if nodes[d.Settlement] == nil {
			nodes[d.Settlement] = map[int]bool{}
		}
		nodes[d.Settlement][d.Node] = true
	}
	return ats, nodes
}

// copyWithin reports whether some settlement is delivered again between lo
// and hi (inclusive) after its first arrival.
func copyWithin(s Schedule, lo, hi time.Duration) bool {
	ats, _ := arrivals(s)
	for _, a := range ats {
		for _, at := range a[1:] {
			if gap := at - a[0]; gap >= lo && gap <= hi {
				return true
			}
		}
	}
	return false
}

// TestGenEveryScheduleHasItsFamilyFeature checks, for every schedule a
// family generates, the feature its preset promises.
func TestGenEveryScheduleHasItsFamilyFeature(t *testing.T) {
	checks := map[Family]func(s Schedule, all []pending) error{
		Clean: func(s Schedule, _ []pending) error {
			if s.Nodes != 1 || len(s.Faults) != 0 || len(s.Deliveries) != len(s.Settlements) {
				return fmt.Errorf("not clean: nodes %d, %d faults, %d deliveries of %d settlements", s.Nodes, len(s.Faults), len(s.Deliveries), len(s.Settlements))
			}
			for i, d := range s.Deliveries {
				if d.Settlement != i {
					return fmt.Errorf("delivery %d is s%d: not in order", i, d.Settlement)
				}
			}
			return nil
		},
		Duplicate: func(s Schedule, _ []pending) error {
			if !copyWithin(s, 0, genRetryAfter) {
				return fmt.Errorf("no copy within %s of a first arrival", genRetryAfter)
			}
			return nil
		},
		Late: func(s Schedule, all []pending) error {
			for _, a := range all {
				if a.arrive >= a.next && a.arrive < a.next+2*tick {
					for _, b := range all {
						if b.player == a.player && b.match == a.match+1 && b.st.Room != a.st.Room {
							return nil
						}
					}
				}
			}
			return fmt.Errorf("no arrival after the next match (in another room) started")
		},
		Interleave: func(s Schedule, all []pending) error {
			for _, a := range all {
				if a.st.Kind == KindFinal && a.hasNext && a.arrive > a.next+2*tick {
					return nil
				}
			}
			return fmt.Errorf("no final after the next match's instant")
		},
		DeepReplay: func(s Schedule, _ []pending) error {
			if !copyWithin(s, 3*MatchEvery, 6*MatchEvery) || 3*MatchEvery <= WindowTTL {
				return fmt.Errorf("no replay 3..6 matches (past WindowTTL %s) after a first arrival", WindowTTL)
			}
			return nil
		},
		WindowExpiry: func(s Schedule, _ []pending) error {
			if !copyWithin(s, WindowTTL, WindowTTL+tick) {
				return fmt.Errorf("no copy just past WindowTTL")
			}
			return nil
		},
		Crash:          faultsOfKinds(CrashBefore, CrashAfter),
		StoreError:     faultsOfKinds(FailBefore),
		TimeoutSuccess: faultsOfKinds(TimeoutAfter),
		MultiNode: func(s Schedule, _ []pending) error {
			_, nodes := arrivals(s)
			for _, n := range nodes {
				if len(n) > 1 {
					return nil
				}
			}
			return fmt.Errorf("no settlement delivered on two nodes (nodes %d)", s.Nodes)
		},
		Concurrent: func(s Schedule, _ []pending) error {
			if !s.Concurrent || s.Nodes < 2 || len(s.Faults) > 0 {
				return fmt.Errorf("concurrent=%t nodes=%d faults=%d", s.Concurrent, s.Nodes, len(s.Faults))
			}
			ats, nodes := arrivals(s)
			for id := range s.Settlements {
				if len(nodes[id]) < 2 || ats[id][0] != ats[id][1] {
					return fmt.Errorf("s%d is not delivered at once on two nodes", id)
				}
			}
			return nil
		},
		SequenceRewind: func(s Schedule, _ []pending) error {
			for _, a := range s.Settlements {
				seqs := map[uint64]bool{}
				for _, b := range s.Settlements {
					if b.Player == a.Player {
						if seqs[b.Seq] {
							goto next
						}
						seqs[b.Seq] = true
					}
				}
				return fmt.Errorf("player %d's seq never restarts", a.Player)
			next:
			}
			return nil
		},
		ThirdKind: func(s Schedule, _ []pending) error {
			perMatch := map[uint64]int{}
			for _, st := range s.Settlements {
				perMatch[st.Match]++
			}
			for m, n := range perMatch {
				if n != 3 {
					return fmt.Errorf("match %d has %d settlements, want 3", m, n)
				}
			}
			return nil
		},
	}
	for _, f := range Families {
		check := checks[f]
		if check == nil {
			t.Fatalf("family %s has no feature check", f)
		}
		t.Run("family="+string(f), func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				s, all := traced(t, f)
				if err := Validate(s); err != nil {
					t.Fatalf("invalid schedule: %v\n%s", err, Format(s))
				}
				if n := len(s.Deliveries); n < 1 || n > 120 {
					t.Fatalf("%d deliveries: not small", n)
				}
				if err := check(s, all); err != nil {
					t.Fatalf("%v\n%s", err, Format(s))
				}
			})
		})
	}
}

func faultsOfKinds(kinds ...FaultKind) func(Schedule, []pending) error {
	return func(s Schedule, _ []pending) error {
		if len(s.Faults) == 0 {
			return fmt.Errorf("no faults")
		}
		for _, f := range s.Faults {
			ok := f.Effect <= 3 && f.Attempt < len(s.Deliveries)
			for _, k := range kinds {
				ok = ok && (f.Kind == k || len(kinds) > 1 && (f.Kind == kinds[0] || f.Kind == kinds[1]))
			}
			if !ok {
				return fmt.Errorf("fault %+v is not one of %v at effects 0..3 of a planned attempt", f, kinds)
			}
		}
		return nil
	}
}

// TestGenMakesCollisions checks that generated settlements collide on every
// subset of the signature fields a mutant drops, for the same player: the
// mutant without room, without net, without the final flag, and the full
// signature across matches (a room re-entered, round restarted, same net).
func TestGenMakesCollisions(t *testing.T) {
	type sig struct {
		room, round uint32
		net         int64
		final       bool
	}
	counts := map[string]int{}
	const schedules = 200
	for seed := range uint64(schedules) {
		s := Generate(Clean, seed)
		found := map[string]bool{}
		for i, a := range s.Settlements {
			for _, b := range s.Settlements[i+1:] {
				if a.Player != b.Player {
					continue
				}
				same := sig{a.Room, a.Round, a.Net, a.Final} == sig{b.Room, b.Round, b.Net, b.Final}
				switch {
				case same:
					found["full signature"] = true
				case a.Round == b.Round && a.Net == b.Net && a.Final == b.Final:
					found["all but room"] = true
				case a.Room == b.Room && a.Round == b.Round && a.Final == b.Final:
					found["all but net"] = true
				case a.Room == b.Room && a.Round == b.Round && a.Net == b.Net:
					found["all but final"] = true
				}
			}
		}
		for k := range found {
			counts[k]++
		}
	}
	// Each collision should appear in a good share of schedules; 10% is far
	// below what the value ranges give and far above zero.
	for _, k := range []string{"full signature", "all but room", "all but net", "all but final"} {
		if counts[k] < schedules/10 {
			t.Errorf("collision %q in %d of %d clean schedules, want >= %d (go test ./faults -run TestGenMakesCollisions)", k, counts[k], schedules, schedules/10)
		}
	}
	t.Logf("collisions per %d clean schedules: %v", schedules, counts)
}
