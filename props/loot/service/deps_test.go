package lootservice_test

import (
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

// depFamilies are the families whose plans fault the service's database
// and Redis (the planner's depFaults).
var depFamilies = []engine.Family{lootfaults.Families.StoreError, lootfaults.Families.LockExpiry, lootfaults.Families.LateClaim, lootfaults.Families.ConcurrentSettle}

// TestLootdOnPostgresAndRedisHoldsUnderDependencyFaults: three lootd
// reaching PostgreSQL and Redis only through the harness's dependency
// proxies ({db}, {redis} in their command, as -upstream does), under the
// plans of the families where the dependencies play: the database reset
// and partitioned, Redis stalled past the lock ttl, the database slowed.
// Every judged property holds, every planned fault applied (each kind at
// least once), and nothing is lost.
func TestLootdOnPostgresAndRedisHoldsUnderDependencyFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and three lootd, and runs for about a minute")
	}
	const repro = "ONCEPROOF_REQUIRE_SERVICES=1 go test ./props/loot/service -count=1 -run TestLootdOnPostgresAndRedisHoldsUnderDependencyFaults"
	dsn := testserver.Postgres(t)
	pg, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	rs := testserver.Redis(t)
	n, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	deps, vars, err := lootservice.DepProxies(n, map[string]string{"db": pg.Host, "redis": rs.Addr})
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.Start(inventory.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	o := lootdproc.Options(t, 3, t.TempDir(), "-db", strings.Replace(dsn, pg.Host, "{db}", 1), "-redis", "redis://{redis}/0", "-redis-prefix", testserver.RedisPrefix(t),
		"-inventory", inv.URL(), "-lock-ttl", lockTTL.String())
	o.Vars = vars
	fleet := lootdproc.StartFleet(t, o)
	var tgs []lootservice.Target
	for i := range 3 {
		tgs = append(tgs, lootservice.Target{Player: fleet.URL(i, "port"), Internal: fleet.URL(i, "internal")})
	}
	// The auditor reads the database directly, not through the faulted path.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qs, err := lootservice.DefaultSpec().Queries("postgres")
	if err != nil {
		t.Fatal(err)
	}
	// With -inventory, what lootd records as delivered is a SUCCESS grant
	// (underProcessFaults says why).
	qs["items"] = "SELECT grant_no, player_id FROM loot_grant WHERE status = 'SUCCESS' AND session_no = $1"
	sum := campaign(t, tgs, depFamilies, len(depFamilies), func(o *lootservice.DriveOptions) {
		o.DB, o.Queries, o.Inject = db, qs, lootservice.Injectors{Deps: deps}
	})
	for _, k := range []lootservice.FaultKind{lootservice.DBReset, lootservice.DBPartition, lootservice.RedisStall, lootservice.DBLatency} {
		if sum.Faults[k] == 0 {
			t.Errorf("no %s applied: %v\nTo reproduce: %s", k, sum.Faults, repro)
		}
	}
	if sum.FaultErrors > 0 {
		t.Errorf("%d faults failed to apply\nTo reproduce: %s", sum.FaultErrors, repro)
	}
	mustHold(t, sum, repro)
	nothingLost(t, db, inv, repro)
	t.Logf("proxy events: %d, first %v", len(n.Events()), fmt.Sprint(n.Events()[:min(2, len(n.Events()))]))
}
