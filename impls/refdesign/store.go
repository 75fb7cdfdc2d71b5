package refdesign

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/internal/slots"
	"github.com/onceproof/onceproof/ref"
)

// Opener opens a fresh, empty store for run number run (0, 1, 2, ... in the
// order the design needs them, a Probe's included; runs of parallel cells
// interleave, so the number names the run's durable state, it does not
// identify the schedule). It returns the store and cleanup, which closes
// the store and removes its durable state (the SQLite file, the PostgreSQL
// table, the Redis keys). Every run needs its own state: the harness
// judges each schedule from an empty store, as MemStore gives it.
type Opener func(ctx context.Context, run int) (st ref.PendingStore, cleanup func() error, err error)

// StoreDesign is the ref design on a real durable store: the same window,
// Settler, keyed credit and Recover as Design, with each run's store the
// caller's instead of ref.NewMemStore. Every store call still goes
// through env.Durable ("claim", "commit", "pending"), so the runner injects
// crashes, store errors and timeouts-after-success exactly where it does on
// MemStore: the fault is decided by the schedule before or after the real
// call, never by the real store. Its verdicts are therefore Design's (a
// store that honours the ref.Store contract cannot change them); a cell
// that differs is a store breaking the contract.
//
// Failures to open, empty or clean up a store are not verdicts: they are
// kept and Err returns them; the caller must check Err after the tests or
// the matrix, because a run whose store did not open sees every store call
// fail, and call Done.
type StoreDesign struct {
	// Book has Probe (before the runs), Runs, Live, Err and Done (after
	// them).
	slots.Book[ref.PendingStore]
	name  string
	where string
	pool  *slots.Pool[ref.PendingStore]
}

var _ faults.Declarer = (*StoreDesign)(nil)

// OnStore returns the ref design on st, a store the caller opened, named
// "ref@"+where (e.g. "ref@postgres"). Runs take st one at a time (a second
// waits for the first to end); empty removes every record st holds (a
// TRUNCATE, a key prefix deleted), before the first run and after each, so
// every run starts from an empty store. The caller closes st after the
// tests; Done is a no-op for it.
func OnStore(where string, st ref.PendingStore, empty func(context.Context) error) *StoreDesign {
	if st == nil || empty == nil {
		panic("refdesign.OnStore: nil store or empty")
	}
	open := func(ctx context.Context, _ int) (*slots.Slot[ref.PendingStore], error) {
		// Records a killed process (or another user) left must not reach
		// the first run.
		if err := empty(ctx); err != nil {
			return nil, err
		}
		return &slots.Slot[ref.PendingStore]{State: st, Empty: empty}, nil
	}
	// One slot: the runs share st, so they must not overlap.
	return newStoreDesign(where, slots.New(open, 1))
}

// OnStores returns the ref design on the stores open returns, a fresh one
// per run (cleaned up after it), named "ref@"+where, so the matrix row
// says which store ran. Runs in flight each have their own store.
func OnStores(where string, open Opener) *StoreDesign {
	if open == nil {
		panic("refdesign.OnStores: nil Opener")
	}
	once := func(ctx context.Context, run int) (*slots.Slot[ref.PendingStore], error) {
		st, cleanup, err := open(ctx, run)
		if err != nil {
			return nil, err
		}
		return &slots.Slot[ref.PendingStore]{State: st, Drop: func(context.Context) error { return cleanup() }}, nil
	}
	return newStoreDesign(where, slots.New(once, 0))
}

func newStoreDesign(where string, pool *slots.Pool[ref.PendingStore]) *StoreDesign {
	if where == "" {
		panic("refdesign: a store design needs a name for its store")
	}
	return &StoreDesign{Book: pool.Book(), name: Name + "@" + where, where: where, pool: pool}
}

// Name implements faults.Design.
func (d *StoreDesign) Name() string { return d.name }

// Declare implements faults.Declarer: ref's declaration, whatever the
// store (a store that keeps the ref.Store contract cannot change a
// verdict), and its paragraph plus the store.
func (d *StoreDesign) Declare() faults.Declaration {
	decl := Design{}.Declare()
	decl.Doc += " This row runs it on a real store (" + d.where +
		"), a fresh one per run, every call still through the fault-injecting environment."
	return decl
}

// NewCluster implements faults.Design: a run's store, empty. The runner
// closes the cluster after the run (faults.ClusterCloser), which frees the
// store for the next run or cleans it up.
func (d *StoreDesign) NewCluster() faults.Cluster {
	run, s, err := d.pool.Acquire(context.Background())
	if err != nil {
		err = fmt.Errorf("%s: opening the store of run %d: %w", d.name, run, err)
		d.pool.Fail(err)
		return &storeCluster{Cluster: NewCluster(brokenStore{err}, NewWindow), d: d}
	}
	return &storeCluster{Cluster: NewCluster(s.State, NewWindow), d: d, slot: s}
}

// storeCluster is one run's durable state on a real store: the ref row's
// cluster on it.
type storeCluster struct {
	*Cluster
	d    *StoreDesign
	slot *slots.Slot[ref.PendingStore] // nil: the store did not open
	once sync.Once
}

var _ faults.ClusterCloser = (*storeCluster)(nil)

// Close implements faults.ClusterCloser: it frees or cleans up the run's
// store once and keeps a failure for StoreDesign.Err.
func (c *storeCluster) Close() {
	c.once.Do(func() {
		if err := c.d.pool.Release(c.slot); err != nil {
			c.d.pool.Fail(fmt.Errorf("%s: cleaning up a run's store: %w", c.d.name, err))
		}
	})
}

// brokenStore is the store of a run whose store did not open: every call
// returns the open error, so the run goes on (and fails liveness) instead
// of panicking inside the harness; StoreDesign.Err says why.
type brokenStore struct{ err error }

func (b brokenStore) Begin(context.Context, ref.Claim) (ref.State, bool, error) {
	return 0, false, b.err
}

func (b brokenStore) Commit(context.Context, ref.Key, ref.State) error { return b.err }

func (b brokenStore) Pending(context.Context, time.Time, int) ([]ref.Record, error) {
	return nil, b.err
}
