package lootservice_test

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/instance"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// lockTTL is lootd's settle lease in these runs: short, so a SIGSTOP of
// lockTTL+1s outlives it and another instance takes the stopped one's
// settles over within the run.
const lockTTL = 2 * time.Second

// processPlan is the fixed fault plan (h-svcfault's planner times them
// from the record's plan; this one is the test's own): instance 0 killed
// -9 at 4 s and restarted on its ports at 8 s; instance 1 stopped at 12 s
// past the lease and continued lockTTL+1s later. 4 s: the first runs'
// sessions are open and claiming by then (each run's claim window is 2 s
// of wall time at scale 0.2).
func processPlan(ctx context.Context, f *instance.Fleet) error {
	steps := []struct {
		at time.Duration
		do func() error
	}{
		{4 * time.Second, func() error { return f.Kill(0) }},
		{8 * time.Second, func() error { return f.Restart(ctx, 0) }},
		{12 * time.Second, func() error { return f.Stop(1) }},
		{12*time.Second + lockTTL + time.Second, func() error { return f.Cont(1) }},
	}
	began := time.Now()
	for _, s := range steps {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(began.Add(s.at))):
		}
		if err := s.do(); err != nil {
			return err
		}
	}
	return nil
}

// underProcessFaults runs a campaign of fams against three lootd started
// with args (and -inventory, the harness's hosted inventory) while
// processPlan puts its faults on them, instance 2 3 s ahead throughout;
// then every judged property must hold, and nothing is lost: every
// session CLOSED or CANCELED, every grant SUCCESS and applied by the
// inventory exactly once under its grant number.
func underProcessFaults(t *testing.T, db *sql.DB, kind string, fams []engine.Family, repro string, args ...string) {
	t.Helper()
	inv, err := inventory.Start(inventory.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer inv.Close()
	args = append(args, "-inventory", inv.URL(), "-lock-ttl", lockTTL.String(), "-clock-skew", "{skew}")
	o := lootdproc.Options(t, 3, t.TempDir(), args...)
	// Instance 2's clock 3 s ahead: more than the lease, so a decision
	// taken by its own clock would show (see cmd/lootd/clock.go for what
	// reads it).
	o.Skew = []time.Duration{0, 0, 3 * time.Second}
	fleet := lootdproc.StartFleet(t, o)
	var tgs []lootservice.Target
	for i := range 3 {
		tgs = append(tgs, lootservice.Target{Player: fleet.URL(i, "port"), Internal: fleet.URL(i, "internal")})
	}
	qs, err := lootservice.DefaultSpec().Queries(kind)
	if err != nil {
		t.Fatal(err)
	}
	// With -inventory lootd's loot_inventory table stays empty: what it
	// records as delivered is a SUCCESS grant (lootd's duty 3), so the
	// auditor reads those; the hosted inventory's ledger is checked
	// against them at the end (nothingLost).
	param := map[string]string{"postgres": "$1", "mysql": "?"}[kind]
	qs["items"] = "SELECT grant_no, player_id FROM loot_grant WHERE status = 'SUCCESS' AND session_no = " + param
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var planErr error
	wg.Go(func() { planErr = processPlan(ctx, fleet) })
	sum := campaign(t, tgs, fams, len(fams), func(o *lootservice.DriveOptions) { o.DB, o.Queries = db, qs })
	cancel()
	wg.Wait()
	if planErr != nil {
		t.Fatalf("the fault plan: %v", planErr)
	}
	var kinds []string
	for _, f := range fleet.Faults() {
		kinds = append(kinds, fmt.Sprintf("%s@%d", f.Kind, f.Target))
	}
	if got := strings.Join(kinds, " "); got != "kill@0 restart@0 stop@1 cont@1" {
		t.Fatalf("the campaign ended before the plan did (faults %s): a plan's faults must fall within the run\nTo reproduce: %s", got, repro)
	}
	t.Logf("faults: %v", fleet.Faults())
	mustHold(t, sum, repro)
	nothingLost(t, db, inv, repro)
}

// nothingLost waits (up to 30 s: lootd retries deliveries every 5 s, the
// compensate-every default) until every session is over and every grant
// delivered, then fails t on what is not.
func nothingLost(t *testing.T, db *sql.DB, inv *inventory.Server, repro string) {
	t.Helper()
	var problems []string
	for deadline := time.Now().Add(30 * time.Second); ; {
		problems = lost(t, db, inv)
		if len(problems) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, p := range problems {
		t.Errorf("lost: %s\nTo reproduce: %s", p, repro)
	}
}

func lost(t *testing.T, db *sql.DB, inv *inventory.Server) []string {
	var out []string
	for _, r := range pairs(t, db, "SELECT session_no, status FROM loot_session WHERE status NOT IN ('CLOSED', 'CANCELED')") {
		out = append(out, fmt.Sprintf("session %s is %s", r[0], r[1]))
	}
	applied := map[string]int{}
	for _, d := range inv.Deliveries() {
		if d.Outcome == inventory.Applied {
			applied[d.Key]++
		}
	}
	grants := map[string]bool{}
	for _, r := range pairs(t, db, "SELECT grant_no, status FROM loot_grant") {
		grants[r[0]] = true
		if r[1] != "SUCCESS" || applied[r[0]] != 1 {
			out = append(out, fmt.Sprintf("grant %s is %s, applied %d times by the inventory", r[0], r[1], applied[r[0]]))
		}
	}
	var strays []string
	for k := range applied {
		if !grants[k] {
			strays = append(strays, k)
		}
	}
	sort.Strings(strays)
	for _, k := range strays {
		out = append(out, fmt.Sprintf("the inventory applied %s, which is no grant of the store", k))
	}
	if len(grants) == 0 {
		out = append(out, "no grant at all: the campaign allocated nothing, so it proves nothing")
	}
	return out
}

// processFamilies are the families run under process faults: concurrent
// settles and cancel races on several instances are where a killed or
// stopped settler matters; duplicate claims are retried to other instances.
var processFamilies = []engine.Family{lootfaults.Families.DuplicateClaim, lootfaults.Families.ConcurrentSettle, lootfaults.Families.CancelRace, lootfaults.Families.SharedLoot}

// TestLootdOnPostgresAndRedisHoldsUnderKillStopAndRestart: three lootd on
// PostgreSQL with the settle lock on Redis, one killed -9 and restarted,
// one stopped past the lock's ttl and continued, one 3 s ahead.
func TestLootdOnPostgresAndRedisHoldsUnderKillStopAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and three lootd, and runs for about a minute")
	}
	dsn := testserver.Postgres(t)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	underProcessFaults(t, db, "postgres", processFamilies,
		"ONCEPROOF_REQUIRE_SERVICES=1 go test ./props/loot/service -run TestLootdOnPostgresAndRedisHoldsUnderKillStopAndRestart",
		"-db", dsn, "-redis", testserver.Redis(t).URL()+"/0", "-redis-prefix", testserver.RedisPrefix(t))
}

// TestLootdOnMariaDBHoldsUnderKillStopAndRestart: the same on MariaDB,
// the store's CAS alone deciding who settles.
func TestLootdOnMariaDBHoldsUnderKillStopAndRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and three lootd, and runs for about a minute")
	}
	dsn := testserver.MariaDB(t)
	url := "mysql://" + strings.Replace(strings.Replace(dsn, "@tcp(", "@", 1), ")/", "/", 1)
	db, err := sql.Open("mysql", dsn+"?parseTime=true")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	underProcessFaults(t, db, "mysql", processFamilies,
		"ONCEPROOF_REQUIRE_SERVICES=1 go test ./props/loot/service -run TestLootdOnMariaDBHoldsUnderKillStopAndRestart", "-db", url)
}

// pairs is q's rows of two text columns.
func pairs(t *testing.T, db *sql.DB, q string) [][2]string {
	rows, err := db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][2]string
	for rows.Next() {
		var r [2]string
		if err := rows.Scan(&r[0], &r[1]); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
