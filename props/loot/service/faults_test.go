package lootservice_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

// faulted is lootd -dev delivering to a hosted inventory, driven through
// netfault proxies: the targets and the injectors reaching both.
func faulted(t *testing.T) ([]lootservice.Target, lootservice.Injectors) {
	t.Helper()
	inv, err := inventory.Start(inventory.Options{Now: time.Now, Hold: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inv.Close() })
	n, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	tg := startLootd(t, "-dev", "-inventory", inv.URL())
	targets, ps, err := lootservice.ProxyTargets(n, []lootservice.Target{tg})
	if err != nil {
		t.Fatal(err)
	}
	return targets, lootservice.Injectors{Net: ps, Inventory: inv}
}

// TestLootdDevHoldsUnderNetworkAndInventoryFaults: lootd -dev, with the
// network between it and the harness and its inventory faulted as the
// fault families plan, holds every judged property; each planned fault
// was applied, and a record replays with the same plan.
func TestLootdDevHoldsUnderNetworkAndInventoryFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lootd and runs for about a minute")
	}
	const repro = "go test ./props/loot/service -count=1 -run TestLootdDevHoldsUnderNetworkAndInventoryFaults"
	targets, inj := faulted(t)
	fams := []engine.Family{lootfaults.Families.TimeoutSuccess, lootfaults.Families.Crash, lootfaults.Families.DuplicateClaim, lootfaults.Families.LateClaim}
	out := t.TempDir()
	o := lootservice.DriveOptions{Targets: targets, Spec: lootservice.DefaultSpec(), Now: time.Now, Inject: inj}
	sum, err := lootservice.Campaign(context.Background(), lootservice.CampaignOptions{
		Drive: o, Families: fams, Seed: 1, Runs: len(fams), Tag: fmt.Sprintf("f%d", time.Now().UnixNano()%1e9),
		Scale: scale, Out: out, Tolerance: lootservice.DefaultTolerance,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("campaign:\n%s", sum)
	if sum.Failed() {
		t.Errorf("a property failed against lootd under faults:\n%s\nTo reproduce: %s", sum, repro)
	}
	for _, k := range []lootservice.FaultKind{lootservice.InvTimeout, lootservice.InvLoseReply, lootservice.NetCutReply, lootservice.NetReset, lootservice.NetLatency, lootservice.NetStall} {
		if sum.Faults[k] == 0 {
			t.Errorf("no %s applied: %v\nTo reproduce: %s", k, sum.Faults, repro)
		}
	}
	if sum.FaultErrors > 0 {
		t.Errorf("%d faults failed to apply\nTo reproduce: %s", sum.FaultErrors, repro)
	}
	files, _ := filepath.Glob(filepath.Join(out, "run000-*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("record files %v, want run 0's\nTo reproduce: %s", files, repro)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := lootservice.ReadRecord(files[0], f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Run.Faults.Faults) == 0 || len(rec.Faults) != 2*len(rec.Run.Faults.Faults) {
		t.Fatalf("record plans %d faults and applied %d steps, want 2 a fault\nTo reproduce: %s", len(rec.Run.Faults.Faults), len(rec.Faults), repro)
	}
	again, fs, err := lootservice.Replay(context.Background(), rec, rec.Run.Tag+"-again", o, lootservice.DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Run.Faults, rec.Run.Faults) || len(again.Faults) != len(rec.Faults) {
		t.Errorf("the replay planned %v and applied %d steps; the record %v and %d\nTo reproduce: %s", again.Run.Faults, len(again.Faults), rec.Run.Faults, len(rec.Faults), repro)
	}
	for _, x := range fs {
		if x.Verdict == lootservice.Failed {
			t.Errorf("the replay failed %s: %v\nTo reproduce: %s", x.Property, x.Anomalies, repro)
		}
	}
}
