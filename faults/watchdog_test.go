package faults_test

import (
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

// A design that leaves a Cluster lock held when a crash unwinds through it
// blocks the next delivery forever; the watchdog ends the run as Stalled
// instead of hanging the caller until go test's timeout.
func TestWatchdogEndsARunBlockedByALockACrashLeftHeld(t *testing.T) {
	s := oneSettlement()
	s.Faults = []engine.Fault{{Attempt: 0, Effect: 0, Kind: engine.CrashAfter}}
	h := faults.Run(faultstest.LocksAcrossEnv{}, s, faults.RunOptions{Stall: 100 * time.Millisecond})
	if !h.Stalled {
		t.Fatalf("the run did not stall: %s", kinds(h))
	}
	last := h.Events[len(h.Events)-1]
	if last.Kind != engine.EvStall || !strings.Contains(last.Err, "blocked") {
		t.Fatalf("last event %+v, want EvStall saying the design blocked", last)
	}
	// The attempt that blocked arrived and never ended.
	if got := kinds(h); !strings.HasSuffix(got, "arrive stall") {
		t.Fatalf("events %s, want the blocked attempt's arrival then the stall", got)
	}
}

// In the interleaved concurrent family, a goroutine parked at an env call
// while holding the lock its rival needs deadlocks the group: the watchdog
// ends that too.
func TestWatchdogEndsADeadlockedConcurrentGroup(t *testing.T) {
	s := oneSettlement()
	s.Family, s.Concurrent, s.Nodes = faults.Families.Concurrent, true, 2
	s.Deliveries = append(s.Deliveries, engine.Delivery{At: s.Deliveries[0].At, Msg: 0, Node: 1})
	s.Switches = []int{0, 1} // 0 starts, parks at its credit holding the lock; 1 runs and blocks on it
	h := faults.Run(faultstest.LocksAcrossEnv{}, s, faults.RunOptions{Stall: 100 * time.Millisecond})
	if !h.Stalled {
		t.Fatalf("the run did not stall: %s", kinds(h))
	}
}

// A correct design never stalls, however small the stall: progress resets
// the watchdog.
func TestWatchdogLeavesAProgressingRunAlone(t *testing.T) {
	for seed := range uint64(20) {
		h := faults.Run(faultstest.Keyed{}, faults.World.Generate(faults.Families.Crash, seed), faults.RunOptions{Stall: 50 * time.Millisecond})
		if h.Stalled || h.Exhausted {
			t.Fatalf("seed %d: stalled=%t exhausted=%t", seed, h.Stalled, h.Exhausted)
		}
	}
}

// A design's panic is recorded with its value and the design's own frame,
// not the runner's, so a user sees where their code failed.
func TestRunRecordsThePanicValueAndTheDesignsFrame(t *testing.T) {
	s := oneSettlement()
	s.Settlements[0].Net = -10
	h := faults.Run(faultstest.PanicsOnDebit{}, s, faults.RunOptions{})
	for _, e := range h.Events {
		if e.Kind != engine.EvPanic {
			continue
		}
		if !strings.Contains(e.Err, "cannot settle a debit of -10") || !strings.Contains(e.Err, "faultstest.panicsNode.Deliver (faultstest.go:") {
			t.Fatalf("panic event Err %q, want the value and faultstest.panicsNode.Deliver's file:line", e.Err)
		}
		return
	}
	t.Fatalf("no panic event: %s", kinds(h))
}
