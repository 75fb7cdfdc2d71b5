// Package lootdproc runs cmd/lootd as child processes for tests that judge
// it from outside (service mode, and lootd's own end-to-end tests): built
// once per test binary and build tags, started as a fleet of package
// instance on loopback ports, killed when the test ends.
package lootdproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/props/loot/service/instance"
)

// build is one build of cmd/lootd.
type build struct {
	once sync.Once
	path string
	err  error
}

var (
	mu     sync.Mutex
	builds = map[string]*build{} // by tags
	dirs   []string
)

// Binary builds cmd/lootd once per test binary and returns its path.
func Binary(t testing.TB) string { return BinaryTags(t, "") }

// BinaryTags builds cmd/lootd with go build -tags tags ("lootdtest": the
// test build's hold points) once per test binary and returns its path. It
// is built without -race even under go test -race: a race build of the
// whole dependency tree costs CI minutes, and lootd's handlers and loops
// run under the race detector in process (cmd/lootd's own tests).
func BinaryTags(t testing.TB, tags string) string {
	t.Helper()
	mu.Lock()
	b := builds[tags]
	if b == nil {
		b = &build{}
		builds[tags] = b
	}
	mu.Unlock()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "lootdproc-")
		if err != nil {
			b.err = err
			return
		}
		mu.Lock()
		dirs = append(dirs, dir)
		mu.Unlock()
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		b.path = filepath.Join(dir, "lootd")
		args := []string{"build", "-o", b.path}
		if tags != "" {
			args = append(args, "-tags", tags)
		}
		if out, err := exec.Command(goBin, append(args, "github.com/onceproof/onceproof/cmd/lootd")...).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go %v: %v\n%s", args, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// RemoveBinaries removes every binary built so far: a TestMain's duty
// after m.Run (what it misses stays in the system's temporary directory).
func RemoveBinaries() {
	mu.Lock()
	defer mu.Unlock()
	for _, d := range dirs {
		os.RemoveAll(d)
	}
	dirs = nil
}

// Listen is the instance template of the lootd at bin with args: its
// player listener on {port}, its operations listener on {internal}.
func Listen(bin string, args ...string) []string {
	return append([]string{bin, "-listen", "127.0.0.1:{port}", "-internal", "127.0.0.1:{internal}"}, args...)
}

// Command is the instance template of lootd with args (Listen's), players
// named by X-Player-Id. Options gives the rest of a fleet of them.
func Command(t testing.TB, args ...string) []string {
	return Listen(Binary(t), append([]string{"-player-header", "X-Player-Id"}, args...)...)
}

// Fleet is a fleet of n of command (a Listen template), ready when
// /healthz answers, logs in dir.
func Fleet(command []string, n int, dir string) instance.Options {
	return instance.Options{
		Command: command, N: n, Dir: dir,
		Ports: []string{"port", "internal"}, Ready: "http://127.0.0.1:{internal}/healthz",
	}
}

// Options is a fleet of n lootd with args (Command's; placeholders as
// package instance fills them), logs in dir.
func Options(t testing.TB, n int, dir string, args ...string) instance.Options {
	return Fleet(Command(t, args...), n, dir)
}

// StartFleet starts o and closes it when t ends, printing each instance's
// log if t failed.
func StartFleet(t testing.TB, o instance.Options) *instance.Fleet {
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
