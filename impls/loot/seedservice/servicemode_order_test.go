package seedservice

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	fleetpkg "github.com/onceproof/onceproof/props/loot/service/instance"
)

// fleetVia starts n instances of the service on e through package
// instance, as `onceproof service -start` does: each on a port the fleet
// picks ({port}), its database reached at {db} (vars["db"]: the address
// of a dependency proxy, or e's MariaDB itself), Redis and the inventory
// e's. It returns the fleet (closed when t ends) and its instances as
// targets.
func (e *env) fleetVia(n int, vars map[string]string, extra ...string) (*fleetpkg.Fleet, []lootservice.Target) {
	t := e.t
	t.Helper()
	addr := strings.TrimPrefix(e.jdbc, "jdbc:mysql://")
	addr = addr[:strings.Index(addr, "/")]
	cmd := e.javaCommand(strings.Replace(e.jdbc, addr, "{db}", 1), extra...)
	if vars == nil {
		vars = map[string]string{"db": addr}
	}
	// A JVM's start on two loaded cores takes seconds: 90 s bounds the wait.
	f, err := fleetpkg.Start(context.Background(), fleetpkg.Options{Command: cmd, N: n, Dir: t.TempDir(), Vars: vars, ReadyTimeout: 90 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var tgs []lootservice.Target
	for i := range n {
		tgs = append(tgs, lootservice.Target{Player: f.URL(i, "port"), Internal: f.URL(i, "port")})
	}
	return f, tgs
}

// find runs runs of family against targets on e's database (seeds 1..runs,
// the plan's faults through inj) and returns the record file of the first
// run that failed p, or fails t naming the verdicts it got.
func (e *env) find(targets []lootservice.Target, family engine.Family, runs int, inj lootservice.Injectors, p engine.Property, repro string) string {
	t := e.t
	t.Helper()
	spec := seedSpec(t)
	qs, err := spec.Queries("mysql")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out := t.TempDir()
	sum, err := lootservice.Campaign(ctx, lootservice.CampaignOptions{
		Drive:    lootservice.DriveOptions{Targets: targets, Spec: spec, Now: time.Now, DB: e.db, Queries: qs, Drain: 15 * time.Second, Inject: inj},
		Families: []engine.Family{family}, Seed: 1, Runs: runs, Tag: fmt.Sprintf("o%d", time.Now().UnixNano()%1e9), Scale: 0.5, Out: out, Tolerance: lootservice.DefaultTolerance,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(sum.String())
	for _, x := range sum.Properties {
		if x.Property == p && len(x.Failures) > 0 {
			t.Logf("%s failed in run %d: %s (record %s)", p, x.Failures[0].Run, strings.Join(x.Failures[0].Anomalies, "; "), x.Failures[0].File)
			return x.Failures[0].File
		}
	}
	t.Fatalf("no run of %s failed %s:\n%s\nTo reproduce: %s", family, p, sum, repro)
	return ""
}

// TestServiceModeFindsTiesOrderedAgainstTheRule: the ties family against
// two instances, RuleOrder judged from the tables (seed.spec's claim rows
// carry fair_score, the grants are the winners), fails: selectRanked
// orders by created_at, whole seconds, and leaves two claims of one second
// in MariaDB's order, not the earlier claim first.
func TestServiceModeFindsTiesOrderedAgainstTheRule(t *testing.T) {
	const repro = "go test ./impls/loot/seedservice -count=1 -run TestServiceModeFindsTiesOrderedAgainstTheRule"
	e := newEnv(t)
	_, tgs := e.fleetVia(2, nil)
	e.find(tgs, lootfaults.Families.Ties, 6, lootservice.Injectors{}, lootfaults.Properties.RuleOrder, repro)
}
