package main

import (
	"net/url"
	"strings"
	"testing"

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
	} {
		wantBadInput(t, "TestServiceUpstreamBadInputIsExit2", c.args, c.want)
	}
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
	code, stdout, stderr := serviceRunArgs("-start", cmd, "-instances", "2", "-ready", "http://127.0.0.1:{internal}/healthz",
		"-upstream", "db="+u.Host, "-faults", "deps", "-db", dsn, "-family", "store-error", "-n", "1", "-out", t.TempDir())
	if code != exitOK || !strings.Contains(stdout, "db-reset 2") || !strings.Contains(stdout, "db-partition 2") || !strings.Contains(stdout, "0 failed to apply") {
		t.Errorf("service -upstream = exit %d, want 0 with db-reset 2 and db-partition 2 applied\n%s%s\nTo reproduce: %s", code, stdout, stderr, repro)
	}
}
