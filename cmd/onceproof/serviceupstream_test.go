package main

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// TestServiceUpstreamBadInputIsExit2: -upstream's dependencies are
// checked before anything starts, each error naming the field.
func TestServiceUpstreamBadInputIsExit2(t *testing.T) {
	start := "lootd -listen 127.0.0.1:{port} -db postgres://u@{db}/x -redis redis://{redis}/0"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-target", "player=http://a,internal=http://b", "-upstream", "db=127.0.0.1:5432"}, "-upstream goes with -start"},
		{[]string{"-start", start, "-upstream", "db"}, `-upstream: "db": want NAME=HOST:PORT`},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1"}, `-upstream: db="127.0.0.1": want HOST:PORT`},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:http"}, `-upstream: db="127.0.0.1:http": want HOST:PORT`},
		{[]string{"-start", start, "-upstream", "d-b=127.0.0.1:5432"}, `-upstream: name "d-b": want a word`},
		{[]string{"-start", start, "-upstream", "port=127.0.0.1:5432"}, `-upstream: name "port" is one of -start's own placeholders`},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:1,db=127.0.0.1:2"}, `-upstream: name "db" given twice`},
		{[]string{"-start", "lootd -listen 127.0.0.1:{port} -db postgres://u@{db}/x", "-upstream", "db=127.0.0.1:1,redis=127.0.0.1:2"}, "-upstream: redis: -start's command has no {redis}"},
		{[]string{"-start", start, "-faults", "deps,disk"}, `-faults: "disk": want none or a list of net, inventory, process, deps`},
		{[]string{"-start", start, "-upstream-latency", "db=110ms"}, "-upstream-latency goes with -start and -upstream"},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:1", "-upstream-latency", "redis=1ms"}, "-upstream-latency: redis: not a dependency the harness fronts (-upstream names db)"},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:1", "-upstream-latency", "db=0,1ms", "-instances", "3"}, "-upstream-latency: db: 2 latencies for 3 instances"},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:1", "-upstream-latency", "db=-5ms"}, "-upstream-latency: db: -5ms: a distance is >= 0"},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:1", "-upstream-latency", "db=soon"}, `-upstream-latency: db: "soon" is not a duration`},
		{[]string{"-start", start, "-replay", distantRecord(t), "-instances", "2"}, "-replay: the record's run had its dependencies at db=0s,110ms (upstreamLatency), which -start's fleet cannot take: db: not a dependency the harness fronts (-upstream names none)"},
	} {
		wantBadInput(t, "TestServiceUpstreamBadInputIsExit2", c.args, c.want)
	}
}

// distantRecord is a record file of a run of two instances whose
// database was 0 and 110 ms away (nothing else in it matters here).
func distantRecord(t *testing.T) string {
	t.Helper()
	w, err := lootservice.Generate(lootfaults.Families.Ties, 1, "far", 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	r := lootservice.Record{Run: lootservice.Run{Family: string(lootfaults.Families.Ties), Seed: 1, Tag: "far", Scale: 0.5,
		Targets:  []lootservice.Target{{Player: "http://a", Internal: "http://a"}, {Player: "http://b", Internal: "http://b"}},
		Schedule: lootprops.World.Format(w.Schedule), Latency: lootservice.Latencies{"db": {0, 110 * time.Millisecond}}}}
	path := filepath.Join(t.TempDir(), "far.jsonl")
	if err := writeRecordFile(path, r); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServiceFaultsTheDatabaseThroughUpstream: with -upstream db=... the
// harness starts lootd reaching PostgreSQL through its proxy ({db}) and
// the store-error run's plan resets and partitions it there: the run holds
// and the summary counts the database's faults applied.
func TestServiceFaultsTheDatabaseThroughUpstream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and lootd")
	}
	const repro = "ONCEPROOF_REQUIRE_SERVICES=1 go test ./cmd/onceproof -count=1 -run TestServiceFaultsTheDatabaseThroughUpstream"
	dsn := testserver.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Join(lootdproc.Command(t, "-db", strings.Replace(dsn, u.Host, "{db}", 1)), " ")
	out := t.TempDir()
	code, stdout, stderr := serviceRunArgs("-start", cmd, "-instances", "2", "-ready", "http://127.0.0.1:{internal}/healthz",
		"-upstream", "db="+u.Host, "-upstream-latency", "db=0,20ms", "-faults", "deps", "-db", dsn, "-family", "store-error", "-n", "1", "-out", out)
	if code != exitOK || !strings.Contains(stdout, "db-reset 2") || !strings.Contains(stdout, "db-partition 2") || !strings.Contains(stdout, "0 failed to apply") ||
		!strings.Contains(stdout, "dependencies at db=0s,20ms each way") {
		t.Errorf("service -upstream -upstream-latency db=0,20ms = exit %d, want 0 with db-reset 2 and db-partition 2 applied (on both instances' paths) and the distances said\n%s%s\nTo reproduce: %s", code, stdout, stderr, repro)
	}
	// The record keeps the distances, for -replay to put back.
	files, _ := filepath.Glob(filepath.Join(out, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("records in -out: %v, want one\nTo reproduce: %s", files, repro)
	}
	rec, err := readRecordFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.Run.Latency.String(); got != "db=0s,20ms" {
		t.Errorf("the record's upstreamLatency is %q, want db=0s,20ms\nTo reproduce: %s", got, repro)
	}
}
