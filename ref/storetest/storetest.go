// Package storetest is the conformance kit for ref's durable backends: every
// store and sink in this module (ref.MemStore and MemSink, ref/sqlite,
// ref/postgres, ref/redis) runs it, and so can a user's own. Run checks the
// ref.PendingStore contract, RunSink the ref.Sink contract, RunCrash
// recovery after kill -9, and BenchClaimCommit is the BenchmarkStore body.
// Each suite is a function whose checks are named subtests (Run says how to
// rerun one). A failure is a real contract violation (no false positives),
// but passing is not a proof (false negatives are possible); teeth_test.go
// runs every check against a store or sink that breaks exactly the rule it
// guards and requires the check to fail.
package storetest

import (
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/ref"
)

// Harness gives the suite access to one store's durable data. Run calls the
// factory once per subtest, so every subtest starts from empty data; the
// factory registers its own cleanup (t.Cleanup) for whatever it created
// (temporary file, database schema, key prefix).
type Harness struct {
	// Open returns a new handle (connection, pool, file handle) on the
	// harness's durable data; every call is a new handle on the SAME data, as
	// a second settler node or a restarted process would see it. Required.
	// The suite closes each handle that implements io.Closer when the
	// subtest ends (or earlier, when it tests reopening).
	Open func(t *testing.T) ref.PendingStore
	// Break, if set, breaks the connection of handle s the way a network
	// failure or a dying server would (kill its server-side connection,
	// close its file descriptor), so that the NEXT call on s must return a
	// non-nil error: an error on a dropped connection must reach the caller,
	// never a silent success. Stores whose client retries transparently
	// must disable that retry on the handle Break is given, or the check
	// fails. Nil skips the check.
	Break func(t *testing.T, s ref.PendingStore)
	_     struct{}
}

// Run runs every conformance check as a subtest of t. newHarness is called
// once per subtest and must return a harness on fresh, empty data.
//
// The checks: atomic claim under 64 goroutines on 4 handles, forward-only
// Commit, ErrNotFound, payload copies, Pending's lease boundary and limit,
// 128-bit keys, close and reopen, cancelled contexts, ErrClosed, a broken
// connection's error. Each is a named subtest, so `go test -run
// 'TestX/begin/atomic'` reruns one check, and a failing check logs the -run
// pattern that reruns it (like testing/fstest.TestFS). Optional
// capabilities (io.Closer, a Break hook) are detected, and the checks that
// need them skip with a line saying why when absent. Passing is not a
// proof: a race the goroutines did not hit goes unseen.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	runChecks(t, "storetest.Run", checks, newHarness)
}

// runChecks runs each check as a subtest on a fresh harness, printing the
// command that reproduces a failure.
func runChecks(t *testing.T, caller string, list []check, newHarness func(t *testing.T) Harness) {
	t.Helper()
	if newHarness == nil {
		t.Fatalf("%s: newHarness is nil", caller)
	}
	for _, c := range list {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("reproduce: go test -race -count=1 -run '%s' <this package>", runPattern(t.Name()))
				}
			})
			h := newHarness(t)
			if h.Open == nil {
				t.Fatal("storetest: Harness.Open is nil")
			}
			c.fn(t, &env{h: h})
		})
	}
}

// runPattern anchors every level of a subtest name, so -run selects exactly it.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// check is one named property.
type check struct {
	name string
	fn   func(t *testing.T, e *env)
}

// env wraps a Harness with handle bookkeeping: every handle the suite opens
// is closed exactly once, at the end of the subtest unless a check closed
// it earlier (stores need not tolerate a double Close).
type env struct {
	h      Harness
	mu     sync.Mutex
	closed map[ref.PendingStore]bool
}

// open returns a new handle and registers its Close.
func (e *env) open(t *testing.T) ref.PendingStore {
	t.Helper()
	s := e.h.Open(t)
	if s == nil {
		t.Fatal("storetest: Harness.Open returned nil")
	}
	t.Cleanup(func() {
		if c, ok := s.(io.Closer); ok && e.markClosed(s) {
			if err := c.Close(); err != nil {
				t.Logf("storetest: closing handle at cleanup: %v", err)
			}
		}
	})
	return s
}

// close closes s now (when it is an io.Closer) and reports whether it could.
func (e *env) close(t *testing.T, s ref.PendingStore) bool {
	t.Helper()
	c, ok := s.(io.Closer)
	if !ok {
		return false
	}
	if e.markClosed(s) {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	return true
}

// markClosed records that s is (being) closed; it reports false if it was
// already.
func (e *env) markClosed(s ref.PendingStore) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed == nil {
		e.closed = make(map[ref.PendingStore]bool)
	}
	if e.closed[s] {
		return false
	}
	e.closed[s] = true
	return true
}

// ctx is the context for calls that are expected to succeed.
func ctx(t *testing.T) context.Context { return t.Context() }
