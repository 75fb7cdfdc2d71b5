// Package lootdproc runs cmd/lootd as child processes for tests that judge
// it from outside (service mode): built once per test binary, started as a
// fleet of package instance on loopback ports, players named by the
// X-Player-Id header, killed when the test ends.
package lootdproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/props/loot/service/instance"
)

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
)

// Binary builds cmd/lootd once per test binary and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lootdproc-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "lootd")
		if out, err := exec.Command("go", "build", "-o", binPath, "github.com/onceproof/onceproof/cmd/lootd").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/lootd: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// Command is the instance template of lootd with args: its player
// listener on {port}, its operations listener on {internal}, players named
// by X-Player-Id. Options gives the rest of a fleet of them.
func Command(t testing.TB, args ...string) []string {
	return append([]string{Binary(t), "-listen", "127.0.0.1:{port}", "-internal", "127.0.0.1:{internal}", "-player-header", "X-Player-Id"}, args...)
}

// Options is a fleet of n lootd with args (placeholders as package
// instance fills them), ready when /healthz answers, logs in dir.
func Options(t testing.TB, n int, dir string, args ...string) instance.Options {
	return instance.Options{
		Command: Command(t, args...), N: n, Dir: dir,
		Ports: []string{"port", "internal"}, Ready: "http://127.0.0.1:{internal}/healthz",
	}
}

// StartFleet starts o and closes it when t ends, printing each instance's
// log if t failed.
func StartFleet(t *testing.T, o instance.Options) *instance.Fleet {
	t.Helper()
	f, err := instance.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.Close()
		if t.Failed() {
			for i := range o.N {
				b, _ := os.ReadFile(filepath.Join(o.Dir, fmt.Sprintf("instance-%d.stderr", i)))
				t.Logf("log of lootd %d:\n%s", i, b)
			}
		}
	})
	return f
}

// Start runs one lootd with args until t ends and returns the base URLs
// of its player and internal listeners.
func Start(t *testing.T, args ...string) (player, internal string) {
	t.Helper()
	f := StartFleet(t, Options(t, 1, t.TempDir(), args...))
	return f.URL(0, "port"), f.URL(0, "internal")
}
