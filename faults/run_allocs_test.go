package faults_test

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
)

// TestRunAllocatesNothingPerDelivery: the runner's hot path (an attempt,
// its env calls, a credit, their events) allocates nothing per delivery,
// so a run's cost follows its history's size and not a count of small
// objects: a design that allocates nothing itself (benchDesign, once its
// grant strings are cached) runs a long-history schedule of about 2,300
// deliveries in a number of allocations that does not grow with them
// (the history, the ledger and the per-settlement tables are each one
// allocation, grown a few times). Before, every attempt allocated its
// call and every credit its event: 2 or more a delivery.
func TestRunAllocatesNothingPerDelivery(t *testing.T) {
	s := faults.World.Generate(faults.Families.LongHistory, 1)
	allocs := testing.AllocsPerRun(3, func() { faults.Run(benchDesign{}, s, faults.RunOptions{}) })
	// 0.1 a delivery: a few hundred fixed allocations (maps growing to
	// 2,300 entries, the node, the runner) over 2,300 deliveries; one per
	// delivery would be 10 times that.
	t.Logf("%d deliveries, %.0f allocations", len(s.Deliveries), allocs)
	if per := allocs / float64(len(s.Deliveries)); per > 0.1 {
		t.Errorf("a run of %d deliveries made %.0f allocations, %.2f a delivery; want at most 0.1 (go test ./faults -run TestRunAllocatesNothingPerDelivery)", len(s.Deliveries), allocs, per)
	}
}
