package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// TestServiceStartBadInputIsExit2: -start's template and its companion
// flags are checked before a run, each naming what is wrong.
func TestServiceStartBadInputIsExit2(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-start", "lootd -db {dbb} -listen 127.0.0.1:{port}", "-out", t.TempDir()}, "unknown placeholder {dbb}"},
		{[]string{"-start", "lootd -listen 127.0.0.1:{port}", "-instances", "0"}, "-instances 0"},
		{[]string{"-start", "lootd -listen 127.0.0.1:{port}", "-instances", "2", "-skew", "0,1s,2s"}, "3 offsets for 2 instances"},
		{[]string{"-start", "lootd -listen 127.0.0.1:{port}", "-skew", "2"}, "-skew \"2\""},
		{[]string{"-start", "lootd", "-target", "player=http://a,internal=http://b"}, "without -target"},
		{[]string{"-target", "player=http://a,internal=http://b", "-skew", "2s"}, "go with -start"},
	} {
		wantBadInput(t, "TestServiceStartBadInputIsExit2", c.args, c.want)
	}
}

// TestServiceStartsItsOwnInstance: with -start the harness runs lootd
// itself on ports it chose, judges it, and leaves its stderr in -out.
func TestServiceStartsItsOwnInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts lootd")
	}
	out := t.TempDir()
	// One -dev instance: two would be two separate in-memory stores.
	cmd := strings.Join(lootdproc.Command(t, "-dev"), " ")
	code, stdout, stderr := serviceRunArgs("-start", cmd, "-instances", "1", "-ready", "http://127.0.0.1:{internal}/healthz",
		"-family", "clean", "-n", "1", "-out", out)
	if code != exitOK || !strings.Contains(stdout, "against 1 instance(s)") {
		t.Fatalf("service -start = exit %d\n%s%s\nTo reproduce: go test ./cmd/onceproof -run TestServiceStartsItsOwnInstance", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "instance-0.stderr"))
	if err != nil || !strings.Contains(string(b), `"msg":"listening"`) {
		t.Errorf("instance-0.stderr in -out: %v, %q; want lootd's log\nTo reproduce: go test ./cmd/onceproof -run TestServiceStartsItsOwnInstance", err, b)
	}
	// The record replays on instances -start starts again (a record of
	// process or dependency faults replays only so: the harness must have
	// started what its plan kills, stops or cuts off), one for one.
	recs, _ := filepath.Glob(filepath.Join(out, "run*.jsonl"))
	if len(recs) != 1 {
		t.Fatalf("records in -out: %v, want 1\nTo reproduce: go test ./cmd/onceproof -run TestServiceStartsItsOwnInstance", recs)
	}
	code, stdout, stderr = serviceRunArgs("-start", cmd, "-instances", "1", "-ready", "http://127.0.0.1:{internal}/healthz",
		"-replay", recs[0], "-out", t.TempDir())
	if code != exitOK || !strings.Contains(stdout, "replayed "+recs[0]) {
		t.Errorf("service -start -replay = exit %d\n%s%s\nTo reproduce: go test ./cmd/onceproof -run TestServiceStartsItsOwnInstance", code, stdout, stderr)
	}
	code, _, stderr = serviceRunArgs("-start", cmd, "-instances", "2", "-ready", "http://127.0.0.1:{internal}/healthz",
		"-replay", recs[0], "-out", t.TempDir())
	if code != exitBadUse || !strings.Contains(stderr, "-instances 2") {
		t.Errorf("service -start -instances 2 -replay (a record of 1) = exit %d, %q; want %d naming -instances\nTo reproduce: go test ./cmd/onceproof -run TestServiceStartsItsOwnInstance", code, stderr, exitBadUse)
	}
}
