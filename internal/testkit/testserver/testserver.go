// Package testserver starts throwaway PostgreSQL, MariaDB and Redis servers
// for tests, from the binaries the Debian packages install (postgresql,
// mariadb-server, redis-server), on 127.0.0.1 only. One server of each kind
// runs per test binary, from first use until Main; each test gets its own
// database or key prefix, so tests never see each other's data. Without the
// binaries a test skips, or fails under RequireEnv=1.
package testserver

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// RequireEnv is the environment variable under which a missing server fails
// the test instead of skipping it: without the binaries the helpers skip the
// test with one line naming the packages to install; with
// ONCEPROOF_REQUIRE_SERVICES=1 in the environment (CI sets it) they fail it
// instead, so a missing server never passes as a skip.
const RequireEnv = "ONCEPROOF_REQUIRE_SERVICES"

// installHint is the one line a skip prints.
const installHint = "apt-get install postgresql mariadb-server redis-server"

// unavailable skips (or, under RequireEnv=1, fails) tb because err kept a
// server from starting.
func unavailable(tb testing.TB, what string, err error) {
	tb.Helper()
	if os.Getenv(RequireEnv) == "1" {
		tb.Fatalf("testserver: %s unavailable and %s=1: %v", what, RequireEnv, err)
		return // for test doubles: a real Fatalf never returns
	}
	tb.Skipf("testserver: %s unavailable (%v); install with: %s", what, err, installHint)
}

// shared is a server every test of the binary shares: started on first
// use, stopped by Main (StopAll).
type shared[S interface{ stop() }] struct {
	once sync.Once
	srv  S
	err  error
}

// get returns the server, starting it with start on first use. It skips tb
// (or fails it, see RequireEnv), naming what, when the server did not
// start.
func (sh *shared[S]) get(tb testing.TB, what string, start func() (S, error)) S {
	tb.Helper()
	sh.once.Do(func() {
		sh.srv, sh.err = start()
		if sh.err == nil {
			atStop(sh.srv.stop)
		}
	})
	if sh.err != nil {
		unavailable(tb, what, sh.err)
	}
	return sh.srv
}

// newDatabase creates a database for tb alone on s and returns how to
// reach it.
func newDatabase(tb testing.TB, s interface{ CreateDatabase(string) (string, error) }) string {
	tb.Helper()
	addr, err := s.CreateDatabase(uniqueName(tb))
	if err != nil {
		tb.Fatalf("testserver: %v", err)
	}
	return addr
}

var (
	stopMu sync.Mutex
	stops  []func()
)

// atStop registers f to run when Main returns (or StopAll is called).
func atStop(f func()) {
	stopMu.Lock()
	stops = append(stops, f)
	stopMu.Unlock()
}

// StopAll stops every server this process started. Main calls it; call it
// yourself from a TestMain that cannot use Main.
func StopAll() {
	stopMu.Lock()
	fs := stops
	stops = nil
	stopMu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
}

// Main runs the package's tests and then stops the servers they started.
// A server starts on first use and stops here (a parent-death signal kills
// it too if the test binary dies first). Servers listen on 127.0.0.1 only,
// on a free port, with their data in a temporary directory that is removed
// when they stop.
// Use it as the package's TestMain body:
//
//	func TestMain(m *testing.M) { testserver.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	StopAll()
	os.Exit(code)
}

// nameFor turns a test name into an identifier fragment safe for SQL and
// Redis keys (lowercase letters, digits and underscores, at most 40 bytes).
func nameFor(tb testing.TB) string {
	b := make([]byte, 0, 40)
	for _, c := range []byte(tb.Name()) {
		if len(b) == cap(b) {
			break
		}
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		default:
			b = append(b, '_')
		}
	}
	return string(b)
}

// seq numbers databases and prefixes so that a test run twice (-count=2) or
// two tests with equal sanitized names never share one.
var (
	seqMu sync.Mutex
	seq   int
)

func next() int {
	seqMu.Lock()
	defer seqMu.Unlock()
	seq++
	return seq
}

func uniqueName(tb testing.TB) string { return fmt.Sprintf("t%d_%s", next(), nameFor(tb)) }
