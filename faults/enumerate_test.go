package faults_test

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// The small scope is every schedule it says, once each, each a world that
// can happen: a verdict "holds: all N" rests on it.
func TestEnumerateIsEveryScheduleOfTheScopeOnce(t *testing.T) {
	seen := map[string]bool{}
	var concurrent, giveUp, slow, recoverFaults int
	kinds := map[engine.FaultKind]bool{}
	nodes := map[int]bool{}
	settlements := map[int]bool{}
	for s := range faults.Enumerate(faults.DefaultScope) {
		if err := faults.World.Validate(s); err != nil {
			t.Fatalf("%v\n%s", err, faults.World.Format(s))
		}
		if err := faults.World.CheckWorld(s); err != nil {
			t.Fatalf("%v\n%s", err, faults.World.Format(s))
		}
		text := faults.World.Format(s)
		if seen[text] {
			t.Fatalf("enumerated twice:\n%s", text)
		}
		seen[text] = true
		if s.Concurrent {
			concurrent++
		}
		if s.GiveUp {
			giveUp++
		}
		if s.RetryAfter > faults.WindowTTL {
			slow++
		}
		for _, f := range s.Faults {
			kinds[f.Kind] = true
			if f.Attempt < 0 {
				recoverFaults++
			}
		}
		nodes[s.Nodes] = true
		settlements[len(s.Settlements)] = true
	}
	// 17 worlds of settlements x their delivery patterns x (no fault, or 40
	// faults x 3 senders for up to 2 deliveries): see DefaultScope.
	if n := len(seen); n < 30000 || n > 45000 {
		t.Errorf("%d schedules, want about 37,000 (DefaultScope's doc)", n)
	}
	if concurrent == 0 || giveUp == 0 || slow == 0 || recoverFaults == 0 || len(kinds) != 4 || !nodes[1] || !nodes[2] || !settlements[1] || !settlements[2] {
		t.Errorf("the scope lacks a dimension: concurrent %d, give-up %d, slow %d, recover faults %d, fault kinds %d, nodes %v, settlements %v",
			concurrent, giveUp, slow, recoverFaults, len(kinds), nodes, settlements)
	}
}
