package main

import (
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// serviceRunArgs runs `onceproof service args...` in process.
func serviceRunArgs(args ...string) (int, string, string) {
	var o, e bytes.Buffer
	code := run(append([]string{"service"}, args...), registries{}, &o, &e)
	return code, o.String(), e.String()
}

// TestServiceBadInputIsOneLineAndExit2: bad flags, a bad spec and an
// unreachable target each end the command before any run, with exit 2 and
// one line naming what is wrong.
func TestServiceBadInputIsOneLineAndExit2(t *testing.T) {
	// A port nobody listens on: listen, take the address, close.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	live := httptest.NewServer(http.NotFoundHandler())
	defer live.Close()
	spec := filepath.Join(t.TempDir(), "my.spec")
	if err := os.WriteFile(spec, []byte("auth header X-Player-Id {player}\nop claim POST player /api/loot/intent {\"p\":\"{plyer}\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := "player=" + live.URL + ",internal=" + live.URL
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "-target is required"},
		{[]string{"-target", "player=" + live.URL}, "want both player=URL and internal=URL"},
		{[]string{"-target", "player=localhost:8080,internal=" + live.URL}, "want an http:// or https:// base URL"},
		{[]string{"-target", ok, "-subject", "settle"}, "loot subject only"},
		{[]string{"-target", ok, "-n", "0"}, "-n 0"},
		{[]string{"-target", ok, "-family", "clen"}, "-family"},
		{[]string{"-target", ok, "-db", "redis://app:secret@db/0"}, "want a postgres:// or mysql:// URL"},
		{[]string{"-target", ok, "-db", "mysql://app:secret@db:3306"}, "-db"},
		{[]string{"-target", ok, "-spec", spec}, "my.spec:2: op claim body: unknown placeholder {plyer}"},
		{[]string{"-target", "player=" + dead + ",internal=" + live.URL}, "instance 1 player " + dead + " is unreachable"},
		{[]string{"-target", ok + ";player=" + live.URL + ",internal=" + dead}, "instance 2 internal " + dead + " is unreachable"},
		{[]string{"-replay", filepath.Join(t.TempDir(), "none.jsonl")}, "-replay"},
		{[]string{"-target", ok, "-faults", "disk"}, `-faults: "disk"`},
		{[]string{"-target", ok, "-reduce"}, "-reduce reduces a -replay"},
		{[]string{"-target", ok, "-repeat", "0"}, "-repeat and -budget"},
		{[]string{"-target", ok, "-align", "-1s"}, "-align -1s: want >= 0"},
		{[]string{"-target", ok, "-align", "1"}, "-align"},
	} {
		stderr := wantBadInput(t, "TestServiceBadInputIsOneLineAndExit2", c.args, c.want)
		if strings.Contains(stderr, "secret") {
			t.Errorf("service %q: stderr shows the password: %q", c.args, stderr)
		}
	}
}

// startLootdForService runs lootd with args, players named by
// X-Player-Id, until t ends; it returns the -target value.
func startLootdForService(t *testing.T, args ...string) string {
	t.Helper()
	p, i := lootdproc.Start(t, args...)
	return "player=" + p + ",internal=" + i
}

// TestServiceAgainstLootdHoldsAndItsRecordReplays runs one clean run
// against `lootd -dev` with -align 1s and replays the record it wrote:
// the run and its replay (without -align: the record's) each start on a
// whole second, and both report lines say so.
func TestServiceAgainstLootdHoldsAndItsRecordReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts lootd")
	}
	target := startLootdForService(t, "-dev")
	out := filepath.Join(t.TempDir(), "records")
	const alignLine = "each run started on a multiple of 1s of the wall clock (-align)"
	code, stdout, errs := serviceRunArgs("-target", target, "-n", "1", "-family", "clean", "-out", out, "-align", "1s")
	if code != exitOK || !strings.Contains(stdout, "1 runs") || strings.Contains(stdout, "FAILED") || !strings.Contains(stdout, alignLine) {
		t.Fatalf("service: exit %d\n%s%s\nTo reproduce: go test ./cmd/onceproof -run TestServiceAgainstLootdHoldsAndItsRecordReplays", code, stdout, errs)
	}
	recs, _ := filepath.Glob(filepath.Join(out, "run000-clean-1.jsonl"))
	if len(recs) != 1 {
		t.Fatalf("no record run000-clean-1.jsonl in %s:\n%s", out, stdout)
	}
	code, stdout, errs = serviceRunArgs("-replay", recs[0], "-out", out)
	if code != exitOK || !strings.Contains(stdout, "replayed "+recs[0]) || !strings.Contains(stdout, "NoLostGrant   held") || !strings.Contains(stdout, alignLine) {
		t.Fatalf("service -replay: exit %d\n%s%s\nTo reproduce: go test ./cmd/onceproof -run TestServiceAgainstLootdHoldsAndItsRecordReplays", code, stdout, errs)
	}
	for _, file := range []string{recs[0], filepath.Join(out, "replay-"+filepath.Base(recs[0]))} {
		rec, err := readRecordFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Run.Align != time.Second || !rec.Run.Started.Truncate(time.Second).Equal(rec.Run.Started) {
			t.Errorf("%s: align %v, started %v; want 1s and a whole second\nTo reproduce: go test ./cmd/onceproof -run TestServiceAgainstLootdHoldsAndItsRecordReplays", file, rec.Run.Align, rec.Run.Started)
		}
	}
}

// TestServiceReadsLootdsPostgreSQLAsAnAuditor: with -db the judge counts
// deliveries from the database's inventory rows.
func TestServiceReadsLootdsPostgreSQLAsAnAuditor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and lootd")
	}
	dsn := testserver.Postgres(t)
	target := startLootdForService(t, "-db", dsn)
	code, stdout, errs := serviceRunArgs("-target", target, "-db", dsn, "-n", "1", "-family", "quantity", "-out", t.TempDir())
	if code != exitOK || !strings.Contains(stdout, "NoDupGrant    held in 1 of 1 runs: from the deliveries the database's inventory rows record") {
		t.Fatalf("service -db: exit %d\n%s%s\nTo reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test ./cmd/onceproof -run TestServiceReadsLootdsPostgreSQLAsAnAuditor", code, stdout, errs)
	}
}

// wantBadInput runs `onceproof service args` and fails t (test names the
// test to rerun) unless it exits 2 with one line on stderr containing
// want; it returns that stderr.
func wantBadInput(t *testing.T, test string, args []string, want string) string {
	t.Helper()
	code, _, stderr := serviceRunArgs(args...)
	if code != exitBadUse || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Errorf("service %q: exit %d, stderr %q; want exit 2 and one line with %q\nTo reproduce: go test ./cmd/onceproof -run %s", args, code, stderr, want, test)
	}
	return stderr
}
