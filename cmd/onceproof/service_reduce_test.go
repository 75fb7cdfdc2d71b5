package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

// slowClockLootd is the arguments of a lootd that fails InWindow on its
// own: -dev's in-memory store judges every deadline by the process's clock
// (cmd/lootd/clock.go), and -clock-skew -3s sets that clock 3 s slow. Each
// session's deadline, as the service states it, is then 3 s before the true
// end of its window, which at -scale 0.1 is 1 s long (10 s of schedule
// time): the deadline stated lies before the open, and every claim the
// service takes is written after it. A real process over real HTTP, broken
// by one of its own flags rather than by a test build.
var slowClockLootd = []string{"-dev", "-clock-skew", "-3s"}

// recordSize is what a reduction can take off a record: the sessions it
// sends any request of, the sends, and the planned faults.
type recordSize struct{ sessions, sends, faults int }

func sizeOf(t *testing.T, file string) recordSize {
	t.Helper()
	r := readRecord(t, file)
	w, err := r.Workload()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	sessions := map[int]bool{}
	for _, s := range w.Sends {
		sessions[w.Schedule.Requests[s.Request].Session] = true
	}
	return recordSize{len(sessions), len(w.Sends), len(r.Run.Faults.Faults)}
}

func readRecord(t *testing.T, file string) lootservice.Record {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := lootservice.ReadRecord(file, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// reducedLine is the report's line for a reduction (Reduced.String).
var reducedLine = regexp.MustCompile(`(?m)^InWindow: reduced by (\d+) sessions, (\d+) sends, (\d+) faults in (\d+) reruns; reproduced in (\d+) of (\d+)(; the rerun budget ran out[^:]*)?: (\S+)$`)

// TestServiceReducesARealFailingRunThroughTheCLI records a failing run of
// a real process (slowClockLootd) over HTTP through proxies that put the
// family's network faults on it, then `service -replay FILE -reduce`
// shrinks the record by rerunning it against the same process: the reduced
// record sends fewer sessions and requests and plans fewer faults, the
// report says in how many of its reruns InWindow failed again, and a plain
// -replay of the reduced record fails InWindow again.
func TestServiceReducesARealFailingRunThroughTheCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts lootd, and reruns a run a dozen times (about a minute)")
	}
	const repro = "go test ./cmd/onceproof -count=1 -run TestServiceReducesARealFailingRunThroughTheCLI"
	target := startLootdForService(t, slowClockLootd...)
	out := filepath.Join(t.TempDir(), "records")
	// concurrent-settle: two sessions, nine requests, two latency faults
	// (the family's network faults, through the proxies -target gets).
	code, stdout, errs := serviceRunArgs("-target", target, "-family", "concurrent-settle", "-n", "1", "-scale", "0.1", "-out", out)
	if code != exitFailed || !strings.Contains(stdout, "InWindow      FAILED in 1 of 1 runs") {
		t.Fatalf("service against a lootd 3 s slow on its own store: exit %d, want 1 with InWindow failed\n%s%s\nTo reproduce: %s", code, stdout, errs, repro)
	}
	t.Logf("the run as recorded:\n%s", stdout)
	rec := filepath.Join(out, "run000-concurrent-settle-1.jsonl")
	before := sizeOf(t, rec)
	if before.faults == 0 || before.sessions < 2 {
		t.Fatalf("%s plans %d faults over %d sessions: nothing to show a reduction on\nTo reproduce: %s", rec, before.faults, before.sessions, repro)
	}

	// -repeat 2: each candidate is rerun up to twice before it is given
	// up, and the result twice more; -budget 40 bounds it at ~13 candidates
	// (2 sessions, 9 sends, 2 faults) x 2 + 2, which it never reaches
	// unless the process stops failing.
	code, stdout, errs = serviceRunArgs("-replay", rec, "-reduce", "-repeat", "2", "-budget", "40", "-out", out)
	m := reducedLine.FindStringSubmatch(stdout)
	if code != exitFailed || m == nil {
		t.Fatalf("service -replay -reduce: exit %d, want 1 and a line matching %s\n%s%s\nTo reproduce: %s", code, reducedLine, stdout, errs, repro)
	}
	t.Logf("the reduction: %s", m[0])
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	reduced := m[8]
	if want := strings.TrimSuffix(rec, ".jsonl") + ".reduced.jsonl"; reduced != want {
		t.Errorf("the reduced record is %s, want %s beside the original", reduced, want)
	}
	after := sizeOf(t, reduced)
	t.Logf("sessions, sends, faults: %+v before, %+v after", before, after)
	switch {
	case after.sessions >= before.sessions || after.sends >= before.sends || after.faults >= before.faults:
		t.Errorf("reduced %+v to %+v: want fewer sessions, sends and faults\nTo reproduce: %s", before, after, repro)
	case n(1) != before.sessions-after.sessions || n(3) != before.faults-after.faults:
		t.Errorf("the report says %s sessions and %s faults removed, the records %+v and %+v\nTo reproduce: %s", m[1], m[3], before, after, repro)
	case n(6) != 2 || n(5) < 1:
		t.Errorf("reproduced in %s of %s: want the -repeat 2 final reruns, at least one failing\nTo reproduce: %s", m[5], m[6], repro)
	case m[7] != "":
		t.Errorf("the budget ran out: %s\nTo reproduce: %s", m[0], repro)
	}

	code, stdout, errs = serviceRunArgs("-replay", reduced, "-out", out)
	if code != exitFailed || !strings.Contains(stdout, "InWindow      failed") {
		t.Fatalf("service -replay of the reduced record: exit %d, want 1 with InWindow failed\n%s%s\nTo reproduce: %s", code, stdout, errs, repro)
	}
	t.Logf("the reduced record replayed:\n%s", stdout)
}
