// Package loottest is the conformance kit for loot.Store and loot.Lock
// implementations: ref/loot/memory runs it, and so must every SQL store
// and Redis lock written against those contracts. Run checks every clause
// of the Store contract and RunLock the Lock contract, each clause a named
// subtest; a failing check logs the -run pattern that reruns it. A failure
// is a real contract violation (no false positives); passing is not a
// proof (a race the goroutines did not hit goes unseen). Its teeth are
// tested: teeth_test.go runs every check against a store or lock built to
// break exactly the clause it guards and requires the check to fail.
package loottest

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/subtest"
	"github.com/onceproof/onceproof/ref/loot"
)

// Harness gives the suite one store's durable data and its clock. Run calls
// the factory once per subtest: every subtest starts on empty data.
type Harness struct {
	// Open returns a new handle (connection pool, client) on the harness's
	// data: every call is another node on the SAME data. Required. Handles
	// that implement io.Closer are closed when the subtest ends.
	Open func(t *testing.T) loot.Store
	// Now reads the store's clock: the "now" its statements use (the
	// database's NOW(6)). Required.
	Now func(t *testing.T) time.Time
	// Advance moves the store's clock forward by d. Required. The clock
	// must stand still between Advances: the checks probe deadlines and
	// leases to the microsecond. A SQL store under test reads its "now"
	// from a clock the harness sets (for example a one-row table its
	// statements select instead of NOW(6)); the suite never moves it back.
	Advance func(t *testing.T, d time.Duration)
	// Inventory, if set, returns the inventory that writes into handle s's
	// data (exactly once end to end); nil skips the end-to-end checks.
	Inventory func(t *testing.T, s loot.Store) loot.Inventory
	// Applied reads the inventory's ledger directly: how many times grant
	// grantNo's item was applied. Required with Inventory; it must count
	// applications, not the presence of the grant number, or a double
	// delivery cannot show.
	Applied func(t *testing.T, grantNo string) int
	_       struct{}
}

// Run runs every Store check as a subtest of t.
//
// The checks: the transitions table, claim upsert under 20 concurrent
// identical claims, deadlines by the store's clock, membership, claims
// frozen at the CAS, exactly one CAS winner of 10, takeover and stale
// fences, all-or-nothing RecordGrants, grant numbers, forward-only grants,
// the compensation lease and its backoff, cancel semantics and its race
// with RecordGrants, Overdue, nothing deleted, UTC microsecond times, the
// audit snapshot, cancelled contexts, and, with a same-store Inventory,
// exactly-once delivery end to end.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	if newHarness == nil {
		t.Fatal("loottest.Run: newHarness is nil")
	}
	runChecks(t, checks, newHarness, func(t *testing.T, h Harness) *env {
		if h.Open == nil || h.Now == nil || h.Advance == nil {
			t.Fatal("loottest: Harness.Open, Now and Advance are required")
		}
		if h.Inventory != nil && h.Applied == nil {
			t.Fatal("loottest: Harness.Applied is required with Harness.Inventory")
		}
		return &env{h: h}
	})
}

// named is one check, the subtest of that name.
type named[E any] struct {
	name string
	fn   func(t *testing.T, e E)
}

// runChecks runs each check as a subtest of t, on what prepare makes of a
// fresh harness; a failing check logs the command that reruns it.
func runChecks[H, E any](t *testing.T, list []named[E], newHarness func(*testing.T) H, prepare func(*testing.T, H) E) {
	for _, c := range list {
		t.Run(c.name, func(t *testing.T) {
			subtest.LogReproduce(t)
			c.fn(t, prepare(t, newHarness(t)))
		})
	}
}

// Together runs f(0), ..., f(n-1) on n goroutines released at the same
// moment (a burst of retries, settlers, compensators) and returns their
// results in order. The stores' own tests use it for the source
// document's concurrency scripts.
func Together[R any](n int, f func(g int) R) []R {
	out := make([]R, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			out[g] = f(g)
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// env is one subtest's harness with handle bookkeeping.
type env struct {
	h    Harness
	mu   sync.Mutex
	seq  int
	main loot.Store
}

// open returns a new handle and registers its Close.
func (e *env) open(t *testing.T) loot.Store {
	t.Helper()
	s := e.h.Open(t)
	if s == nil {
		t.Fatal("loottest: Harness.Open returned nil")
	}
	if c, ok := s.(io.Closer); ok {
		t.Cleanup(func() {
			if err := c.Close(); err != nil {
				t.Logf("loottest: closing handle: %v", err)
			}
		})
	}
	return s
}

// store returns the subtest's first handle, opened on first use.
func (e *env) store(t *testing.T) loot.Store {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.main == nil {
		e.main = e.open(t)
	}
	return e.main
}

func (e *env) now(t *testing.T) time.Time { return e.h.Now(t) }

func (e *env) advance(t *testing.T, d time.Duration) { e.h.Advance(t, d) }

func ctx(t *testing.T) context.Context { return t.Context() }
