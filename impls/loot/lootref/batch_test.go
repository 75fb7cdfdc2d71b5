package lootref_test

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
)

// TestTheMatrixTakesTheBatchPath: loot-ref's nodes deliver a settle's
// grants through the world's inventory as a loot.BatchInventory and mark
// them in one MarkDeliveredBatch (EnvBatchStore), so the matrix judges
// the Service's batch path, not only its one-grant path. Seen in the
// quantity family's histories (several items a session): one mark-delivered store call per delivery
// batch, so fewer marks than items applied once some settle had two or
// more winners; on the one-grant path (the world's inventory a plain
// loot.Inventory, as before) every applied item has its own mark.
func TestTheMatrixTakesTheBatchPath(t *testing.T) {
	const run = "go test -count=1 -run '^TestTheMatrixTakesTheBatchPath$' ./impls/loot/lootref/"
	f := lootfaults.Families.Quantity
	marks, items := 0, 0
	for seed := uint64(1); seed <= 20; seed++ {
		h := lootfaults.Run(lootref.Design{}, lootfaults.World.Generate(f, seed), engine.RunOptions{})
		for _, e := range h.Events {
			switch {
			case e.Kind == engine.EvEffect && e.Op == "mark-delivered" && e.Err == "":
				marks++
			case e.Kind == lootfaults.Events.Item && e.Detail.OK:
				items++
			}
		}
	}
	if items == 0 || marks >= items {
		t.Fatalf("loot-ref under %s, seeds 1-20: %d mark-delivered calls for %d items applied; want fewer marks (one per settle's batch): "+
			"the matrix runs only the one-grant delivery path (%s)", f, marks, items, run)
	}
	t.Logf("%d mark-delivered calls for %d items applied", marks, items)
}
