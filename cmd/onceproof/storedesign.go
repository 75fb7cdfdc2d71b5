package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
)

// Opener opens a fresh, empty store for run number run (0, 1, 2, ... in the
// order the harness builds clusters; runs of parallel cells interleave, so
// the number names the run's durable state, it does not identify the
// schedule). It returns the store and cleanup, which closes the store and
// removes its durable state (the SQLite file, the PostgreSQL table, the
// Redis keys). Every run needs its own state: the harness judges each
// schedule from an empty store, as MemStore gives it.
type Opener func(ctx context.Context, run int) (st ref.PendingStore, cleanup func() error, err error)

// StoreDesign is the ref design on a real durable store: the same window,
// Settler, keyed credit and Recover as Design, with each run's store opened
// by an Opener instead of ref.NewMemStore. Every store call still goes
// through env.Durable ("claim", "commit", "pending"), so the runner injects
// crashes, store errors and timeouts-after-success exactly where it does on
// MemStore: the fault is decided by the schedule before or after the real
// call, never by the real store. Its verdicts are therefore Design's (a
// store that honours the ref.Store contract cannot change them); a cell
// that differs is a store breaking the contract.
//
// Failures to open or clean up a store are not verdicts: they are kept and
// Err returns them; the caller must check Err after the matrix, because a
// run whose store did not open sees every store call fail.
type StoreDesign struct {
	runBook
	name string
	open Opener
}

var _ faults.Declarer = (*StoreDesign)(nil)

// WithStore returns the ref design on the stores open returns, named
// "ref@"+store (e.g. "ref@postgres"), so the matrix row says which store
// ran. store must not be empty.
func WithStore(store string, open Opener) *StoreDesign {
	if store == "" || open == nil {
		panic("WithStore: empty store name or nil Opener")
	}
	return &StoreDesign{name: refdesign.Name + "@" + store, open: open}
}

// Name implements faults.Design.
func (d *StoreDesign) Name() string { return d.name }

// Declare implements faults.Declarer: ref's declaration, whatever the
// store (a store that keeps the ref.Store contract cannot change a
// verdict), and its paragraph plus the store.
func (d *StoreDesign) Declare() faults.Declaration {
	decl := refdesign.Design{}.Declare()
	decl.Doc += " This row runs it on a real store (" + d.name[len(refdesign.Name)+1:] +
		"), a fresh one per run, every call still through the fault-injecting environment."
	return decl
}

// NewCluster implements faults.Design: it opens a fresh store. The
// runner closes the cluster after the run (faults.ClusterCloser), which
// runs the Opener's cleanup.
func (d *StoreDesign) NewCluster() faults.Cluster {
	run := d.start()
	st, cleanup, err := d.open(context.Background(), run)
	if err != nil {
		err = fmt.Errorf("%s: opening the store of run %d: %w", d.name, run, err)
		d.fail(err)
		return &StoreCluster{Cluster: refdesign.NewCluster(brokenStore{err}, refdesign.NewWindow), d: d}
	}
	return &StoreCluster{Cluster: refdesign.NewCluster(st, refdesign.NewWindow), d: d, cleanup: cleanup}
}

// Probe opens one fresh store under ctx and cleans it up, before a matrix:
// a store that cannot be used (refused, wrong password, no privilege) fails
// here, at once and with its cause, instead of in every run.
func (d *StoreDesign) Probe(ctx context.Context) error {
	_, cleanup, err := d.open(ctx, d.probe())
	if err != nil {
		return err
	}
	return cleanup()
}

// StoreCluster is one run's durable state on a real store: the ref row's
// cluster on it.
type StoreCluster struct {
	*refdesign.Cluster
	d       *StoreDesign
	cleanup func() error
	once    sync.Once
}

var _ faults.ClusterCloser = (*StoreCluster)(nil)

// Close implements faults.ClusterCloser: it runs the Opener's cleanup once
// and keeps its error for StoreDesign.Err.
func (c *StoreCluster) Close() {
	c.once.Do(func() {
		if c.cleanup != nil {
			if err := c.cleanup(); err != nil {
				c.d.fail(fmt.Errorf("%s: cleaning up a run's store: %w", c.d.name, err))
			}
		}
		c.d.end()
	})
}

// brokenStore is the store of a run whose Opener failed: every call
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
