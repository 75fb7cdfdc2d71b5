package lootservice_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootservice "github.com/onceproof/onceproof/props/loot/service"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// scale plays a schedule's 10 s claim window in 2 s: lootd's claim window
// is whole seconds, so 2 keeps the deadline's rounding (at most half a
// second of the schedule's 10) and a run of two sessions within 10 s.
const scale = 0.2

// campaign runs runs of families against targets and fails t on an error.
// with, if given, changing the drive's options.
func campaign(t *testing.T, targets []lootservice.Target, families []engine.Family, runs int, with ...func(*lootservice.DriveOptions)) lootservice.Summary {
	t.Helper()
	o := lootservice.DriveOptions{Targets: targets, Spec: lootservice.DefaultSpec(), Now: time.Now}
	for _, f := range with {
		f(&o)
	}
	sum, err := lootservice.Campaign(context.Background(), lootservice.CampaignOptions{
		Drive:    o,
		Families: families, Seed: 1, Runs: runs, Tag: fmt.Sprintf("t%d", time.Now().UnixNano()%1e9),
		Scale: scale, Out: t.TempDir(), Tolerance: lootservice.DefaultTolerance,
		// Every lootd these tests start has -lock-ttl lockTTL or longer.
		LockTTL: lockTTL,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("campaign:\n%s", sum)
	return sum
}

// mustHold fails t if any property failed or was never judged but for
// those a black box cannot judge at all.
func mustHold(t *testing.T, sum lootservice.Summary, repro string) {
	t.Helper()
	if sum.Failed() {
		t.Errorf("a property failed against lootd:\n%s\nTo reproduce: %s", sum, repro)
	}
	for _, p := range sum.Properties {
		if p.Verdict == lootservice.NotJudged && p.Property != lootfaults.Properties.Responsive {
			t.Errorf("%s was never judged: %s\nTo reproduce: %s", p.Property, strings.Join(p.Why, "; "), repro)
		}
	}
	if sum.Unmapped > 0 || sum.GiveUps > 0 {
		t.Errorf("%d answers matched no rule, %d requests given up\nTo reproduce: %s", sum.Unmapped, sum.GiveUps, repro)
	}
}

// TestLootdDevHoldsEveryProperty runs a short campaign against one
// `lootd -dev` (in memory).
func TestLootdDevHoldsEveryProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lootd and runs for about a minute")
	}
	tg := startLootd(t, "-dev")
	fams := []engine.Family{lootfaults.Families.Clean, lootfaults.Families.DuplicateClaim, lootfaults.Families.LateClaim, lootfaults.Families.Outsider, lootfaults.Families.CancelRace}
	sum := campaign(t, []lootservice.Target{tg}, fams, len(fams))
	mustHold(t, sum, "go test ./props/loot/service -run TestLootdDevHoldsEveryProperty")
}

// TestRecordReplaysItsWorkload: a record written and read back judges the
// same, and a replay sends its requests again.
func TestRecordReplaysItsWorkload(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lootd")
	}
	tg := startLootd(t, "-dev")
	o := lootservice.DriveOptions{Targets: []lootservice.Target{tg}, Spec: lootservice.DefaultSpec(), Now: time.Now}
	w, err := lootservice.Generate(lootfaults.Families.Clean, 3, fmt.Sprintf("rp%d", time.Now().UnixNano()%1e9), scale, 1)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := lootservice.Drive(context.Background(), w, string(lootfaults.Families.Clean), 3, o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := lootservice.ReadRecord("rec.jsonl", &buf)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lootservice.Judge(rec, lootservice.DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lootservice.Judge(back, lootservice.DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the record read back judges\n%v\nnot as written\n%v\nTo reproduce: go test ./props/loot/service -run TestRecordReplaysItsWorkload", b, a)
	}
	again, fs, err := lootservice.Replay(context.Background(), back, w.Tag+"again", lootservice.DriveOptions{Now: time.Now}, lootservice.DefaultTolerance)
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Exchanges) < len(w.Sends) || again.Run.Schedule != rec.Run.Schedule || again.Run.Tag == rec.Run.Tag {
		t.Errorf("the replay sent %d attempts of %d planned (schedule same: %v, tag %q after %q)\nTo reproduce: go test ./props/loot/service -run TestRecordReplaysItsWorkload",
			len(again.Exchanges), len(w.Sends), again.Run.Schedule == rec.Run.Schedule, again.Run.Tag, rec.Run.Tag)
	}
	for _, f := range fs {
		if f.Verdict == lootservice.Failed {
			t.Errorf("the replay failed %s: %v\nTo reproduce: go test ./props/loot/service -run TestRecordReplaysItsWorkload", f.Property, f.Anomalies)
		}
	}
}

// TestLootdOnPostgresThreeInstancesHoldsEveryProperty runs a short
// campaign against three lootd instances on one PostgreSQL database with
// the settle lock on Redis (throwaway servers), requests spread over the
// three as the schedules' nodes say, the judge reading the database's
// claim and inventory rows as an auditor.
func TestLootdOnPostgresThreeInstancesHoldsEveryProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and three lootd, and runs for about a minute")
	}
	dsn := testserver.Postgres(t)
	redis := []string{"-redis", testserver.Redis(t).URL() + "/0", "-redis-prefix", testserver.RedisPrefix(t)}
	var tgs []lootservice.Target
	for range 3 {
		tgs = append(tgs, startLootd(t, append([]string{"-db", dsn}, redis...)...))
	}
	fams := []engine.Family{lootfaults.Families.DuplicateClaim, lootfaults.Families.ConcurrentSettle, lootfaults.Families.CancelRace, lootfaults.Families.Quantity, lootfaults.Families.SharedLoot}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qs, err := lootservice.DefaultSpec().Queries("postgres")
	if err != nil {
		t.Fatal(err)
	}
	sum := campaign(t, tgs, fams, len(fams), func(o *lootservice.DriveOptions) { o.DB, o.Queries = db, qs })
	mustHold(t, sum, "ONCEPROOF_REQUIRE_SERVICES=1 go test ./props/loot/service -run TestLootdOnPostgresThreeInstancesHoldsEveryProperty")
	for _, p := range sum.Properties {
		if p.Property == lootfaults.Properties.NoDupGrant && !strings.Contains(p.How, "database's inventory rows") {
			t.Errorf("NoDupGrant was judged %s, not from the database's inventory rows", p.How)
		}
	}
}

// TestLootdOnMariaDBHoldsEveryPropertyReadAsAnAuditor: two lootd on one
// MariaDB database, the judge reading its claim and inventory rows with
// the default spec's mysql queries.
func TestLootdOnMariaDBHoldsEveryPropertyReadAsAnAuditor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MariaDB and two lootd, and runs for half a minute")
	}
	dsn := testserver.MariaDB(t) // go-sql-driver's form: user:pass@tcp(host:port)/db
	url := "mysql://" + strings.Replace(strings.Replace(dsn, "@tcp(", "@", 1), ")/", "/", 1)
	tgs := []lootservice.Target{startLootd(t, "-db", url), startLootd(t, "-db", url)}
	db, err := sql.Open("mysql", dsn+"?parseTime=true")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	qs, err := lootservice.DefaultSpec().Queries("mysql")
	if err != nil {
		t.Fatal(err)
	}
	fams := []engine.Family{lootfaults.Families.Clean, lootfaults.Families.DuplicateClaim, lootfaults.Families.Quantity}
	sum := campaign(t, tgs, fams, len(fams), func(o *lootservice.DriveOptions) { o.DB, o.Queries = db, qs })
	mustHold(t, sum, "ONCEPROOF_REQUIRE_SERVICES=1 go test ./props/loot/service -run TestLootdOnMariaDBHoldsEveryPropertyReadAsAnAuditor")
}
