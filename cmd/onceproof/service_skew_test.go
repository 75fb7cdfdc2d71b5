package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/props/loot/service/instance"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// skews is -skew for the three instances: one on time, one ahead and one
// behind by more than a claim window at -scale 0.1 (1 s), so a deadline
// judged by any one instance's clock would show in every run.
const skews = "0,2s,-3s"

// TestServiceSkewedLootdOnASharedStoreHolds starts three lootd on one
// PostgreSQL with the settle lock on Redis, their clocks 0, +2 s and -3 s
// off (-clock-skew {skew}), and judges families whose claims and settles
// come near the deadline: every judged property holds, since every
// deadline, lease and claim time is the database's clock and the lock's
// ttl Redis's. Each instance's log begins with the harness's line saying
// its skew.
func TestServiceSkewedLootdOnASharedStoreHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and three lootd")
	}
	const repro = "ONCEPROOF_REQUIRE_SERVICES=1 go test ./cmd/onceproof -count=1 -run TestServiceSkewedLootdOnASharedStoreHolds"
	dsn := testserver.Postgres(t)
	start := strings.Join(lootdproc.Command(t, "-db", dsn, "-redis", testserver.Redis(t).URL()+"/0", "-redis-prefix", testserver.RedisPrefix(t),
		"-clock-skew", "{skew}"), " ")
	out := t.TempDir()
	code, stdout, errs := serviceRunArgs("-start", start, "-instances", "3", "-skew", skews, "-ready", "http://127.0.0.1:{internal}/healthz",
		"-db", dsn, "-family", "late-claim,concurrent-settle,clean", "-n", "3", "-scale", "0.1", "-out", out)
	if code != exitOK || !strings.Contains(stdout, "against 3 instance(s)") || strings.Contains(stdout, "FAILED") {
		t.Fatalf("service -start (3 lootd, -skew %s, one PostgreSQL): exit %d, want 0 and every property held\n%s%s\nTo reproduce: %s", skews, code, stdout, errs, repro)
	}
	t.Logf("%s", stdout)
	for i, want := range strings.Split(skews, ",") {
		if got := startedSkew(t, out, i); got != want && !(want == "0" && got == "0s") {
			t.Errorf("instance %d's log says skew %q, want %q (-skew %s)\nTo reproduce: %s", i, got, want, skews, repro)
		}
	}
	// The record names each instance's clock too (a reader of a record
	// alone, or a replay, must know which answers came from which clock).
	files, _ := filepath.Glob(filepath.Join(out, "run*.jsonl"))
	if len(files) == 0 {
		t.Fatalf("no record in %s\nTo reproduce: %s", out, repro)
	}
	for _, file := range files {
		r, err := readRecordFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range strings.Split(skews, ",") {
			d, _ := time.ParseDuration(want + map[bool]string{true: "s"}[want == "0"])
			if i >= len(r.Run.Targets) || r.Run.Targets[i].Skew != d.String() {
				t.Errorf("%s: target %d's skew %+v, want %s (-skew %s)\nTo reproduce: %s", file, i, r.Run.Targets, d, skews, repro)
			}
		}
	}
}

// startedSkew is the skew the harness's first line in instance i's log
// says it started it with.
func startedSkew(t *testing.T, dir string, i int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("instance-%d.stderr", i)))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	var l instance.Started
	if err := json.Unmarshal([]byte(first), &l); err != nil || l.Msg != instance.StartedMsg {
		t.Fatalf("instance %d's log begins %q, not the harness's start line (%v)", i, first, err)
	}
	return l.Skew
}

// TestServiceLootdOnItsOwnClockFailsWhenSkewed: one lootd -dev, whose
// in-memory store judges deadlines by the process's clock, run 3 s slow,
// 2 s fast and on time. Slow, the deadline it states is 3 s before its
// window ends: the claims it takes are late (InWindow). Fast, the deadline
// it states is 2 s after its window ends: it freezes before it (OnTime),
// and a claim that arrives in those 2 s, while its own reads still show
// the session CLAIMING, is refused as late (HonestAnswer): whether one
// does is the run's timing (CI's loaded run had two, the first runs none),
// so HonestAnswer may fail there and nothing else. On time, everything
// holds: the failures are the skew's.
func TestServiceLootdOnItsOwnClockFailsWhenSkewed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts lootd three times")
	}
	const repro = "go test ./cmd/onceproof -count=1 -run TestServiceLootdOnItsOwnClockFailsWhenSkewed"
	start := strings.Join(lootdproc.Command(t, "-dev", "-clock-skew", "{skew}"), " ")
	for _, c := range []struct {
		skew string
		fail string // must fail; "": every property holds
		may  string // may fail too
	}{
		{"-3s", "InWindow", ""},
		{"2s", "OnTime", "HonestAnswer"},
		{"0s", "", ""},
	} {
		code, stdout, errs := serviceRunArgs("-start", start, "-instances", "1", "-skew", c.skew, "-ready", "http://127.0.0.1:{internal}/healthz",
			"-family", "clean,late-claim", "-n", "2", "-scale", "0.1", "-out", t.TempDir())
		failed := failedProperties(stdout)
		wantCode := exitFailed
		if c.fail == "" {
			wantCode = exitOK
		}
		ok := code == wantCode && (c.fail == "" || slices.Contains(failed, c.fail))
		for _, p := range failed {
			ok = ok && (p == c.fail || p == c.may)
		}
		if !ok {
			t.Errorf("-skew %s: exit %d, failed %v; want exit %d, failed %q (and perhaps %q), nothing else\n%s%s\nTo reproduce: %s", c.skew, code, failed, wantCode, c.fail, c.may, stdout, errs, repro)
			continue
		}
		t.Logf("-skew %s:\n%s", c.skew, stdout)
	}
}

// failedProperties are the properties a campaign's report says FAILED.
func failedProperties(report string) []string {
	var out []string
	for _, l := range strings.Split(report, "\n") {
		if p, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(strings.TrimSpace(rest), "FAILED") {
			out = append(out, p)
		}
	}
	return out
}
