package lootref

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/internal/slots"
)

// Slot is the durable state of loot runs on a real server, one run at a
// time: a PostgreSQL schema or a MySQL database holding a store's tables,
// the store open on it, and a lock service. A run's Close empties it and
// hands it to the next run, so every run starts from empty tables without
// paying a schema's creation (tens of milliseconds) each time.
type Slot struct {
	// Cluster is the row's cluster on the slot for one run whose database
	// clock is db (NewCluster, for loot-ref on a store).
	Cluster func(db lootfaults.Clock) lootfaults.Cluster
	// Locks, if set, is the slot's lock service on a real server, which
	// the runs use in place of the world's model (LockService).
	Locks LockServer
	// Empty removes what a run left (the tables' rows, the lock keys), for
	// the next run; nil: the slot serves one run and is dropped after it.
	Empty func(ctx context.Context) error
	// Drop closes the slot's store and removes its schema or database; nil:
	// nothing to remove.
	Drop func(ctx context.Context) error
}

// Opener creates slot number k (0, 1, ...; as many as runs in flight, a
// Probe's included).
type Opener func(ctx context.Context, k int) (*Slot, error)

// Where is what a StoreDesign runs on, for its name and declaration.
type Where struct {
	// DB is the database's kind ("postgres", "mysql"); "" is the row's
	// own in-memory store.
	DB string
	// Lock is the lock service's kind ("redis"); "" is the world's model.
	Lock string
	_    struct{}
}

// StoreDesign is a loot row on a real database or lock service: loot-ref
// (the same Service, world lock and inventory as in memory, with a real
// store under it) or another row's cluster on the slots an Opener creates,
// the database's clock the world's (moved before every statement). Every
// store call is still one Env call, so faults land where they do in
// memory and the verdicts must be the in-memory row's: a cell that differs
// is the database behaving otherwise than the in-memory model of it.
//
// Failures to open, empty or drop a slot are not verdicts: Err returns
// them, and the caller must check it after the tests or the matrix, and
// call Done.
type StoreDesign struct {
	// Book has Probe (before the runs), Runs, Live, Err and Done (after
	// them).
	slots.Book[*Slot]
	base  lootfaults.Design // the in-memory row: its declaration, and a failed slot's stand-in
	name  string
	where Where
	pool  *slots.Pool[*Slot]
}

var _ engine.Declarer = (*StoreDesign)(nil)

// Options is how OnStore runs loot-ref on a store the caller opened.
type Options struct {
	// SetClock moves the store's test clock to now, the world's database
	// time; it runs inside every store call, before it (the world judges
	// deadlines by its database clock, and so must the store). Required.
	SetClock func(ctx context.Context, now time.Time) error
	// Empty removes every session, claim, grant and snapshot the store
	// holds, and Locks's keys: before the first run and after each.
	// Required.
	Empty func(ctx context.Context) error
	// Locks, if set, is a lock service the caller opened, which the runs
	// use in place of the world's model.
	Locks LockServer
	_     struct{}
}

// OnStore returns loot-ref on st, a store the caller opened, named
// "loot-ref@"+where (e.g. "loot-ref@postgres+redis"). Runs take st one at a
// time (a second waits for the first to end). The caller closes st after
// the tests; Done is a no-op for it.
func OnStore(where Where, st Store, o Options) *StoreDesign {
	if st == nil || o.SetClock == nil || o.Empty == nil {
		panic("lootref.OnStore: nil store, SetClock or Empty")
	}
	open := func(ctx context.Context, _ int) (*Slot, error) {
		// Rows a killed process (or another user) left must not reach the
		// first run.
		if err := o.Empty(ctx); err != nil {
			return nil, err
		}
		return &Slot{
			Cluster: func(db lootfaults.Clock) lootfaults.Cluster { return NewCluster(st, db, o.SetClock) },
			Locks:   o.Locks,
			Empty:   o.Empty,
		}, nil
	}
	// One slot: the runs share st, so they must not overlap.
	return onSlots(Design{}, where, open, 1)
}

// OnSlots returns the row base on the slots open creates, as many as runs
// in flight, named base's name + "@" + where (e.g.
// "loot-seed-verbatim@mysql", "loot-ref@memory+redis"). base is the
// in-memory row: its declaration is the row's, and a run whose slot did
// not open runs on it (its verdict void: Err says why).
func OnSlots(base lootfaults.Design, where Where, open Opener) *StoreDesign {
	if base == nil || open == nil {
		panic("lootref.OnSlots: nil row or Opener")
	}
	return onSlots(base, where, open, 0)
}

func onSlots(base lootfaults.Design, where Where, open Opener, max int) *StoreDesign {
	name := base.Name() + "@" + cmp.Or(where.DB, "memory")
	if where.Lock != "" {
		name += "+" + where.Lock
	}
	pool := slots.New(func(ctx context.Context, k int) (*slots.Slot[*Slot], error) {
		s, err := open(ctx, k)
		if err != nil {
			return nil, err
		}
		return &slots.Slot[*Slot]{State: s, Empty: s.Empty, Drop: s.Drop}, nil
	}, max)
	return &StoreDesign{Book: pool.Book(), base: base, name: name, where: where, pool: pool}
}

// Name implements lootfaults.Design: "loot-ref@postgres",
// "loot-ref@mysql" or "loot-seed-verbatim@mysql".
func (d *StoreDesign) Name() string { return d.name }

// Declare implements engine.Declarer: the in-memory row's declaration
// (the database and the lock service keep the contracts the in-memory
// models assume, or the cells differ).
func (d *StoreDesign) Declare() engine.Declaration {
	decl := engine.DeclarationOf(d.base)
	if d.where.DB != "" {
		decl.Doc += " This row runs it on a real database (" + d.where.DB + "), emptied before every run, its clock the world's database clock, every call still through the fault-injecting environment."
	}
	if d.where.Lock != "" {
		decl.Doc += " Its lock service is a real server (" + d.where.Lock + ": SET NX PX, the compare-and-delete script; GET and DEL), one key prefix per run in flight, emptied before every run; a key's ttl ends by the world's lock clock (the key is deleted before the first call at or past its end), every call still through the fault-injecting environment."
	}
	return decl
}

// NewCluster implements lootfaults.Design: a slot's store, its clock moved
// to db's time before every call.
func (d *StoreDesign) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	run, s, err := d.pool.Acquire(context.Background())
	if err != nil {
		d.pool.Fail(fmt.Errorf("%s: opening the database of run %d: %w", d.name, run, err))
		// The run goes on in memory so the harness need not stop; its
		// verdict is never written: Err reports the failure first.
		return &storeCluster{Cluster: d.base.NewCluster(db), d: d}
	}
	c := &storeCluster{Cluster: s.State.Cluster(db), d: d, slot: s}
	if s.State.Locks != nil {
		c.locks = newLockService(s.State.Locks, d.pool.Fail)
	}
	return c
}

// storeCluster is one run's cluster on a slot.
type storeCluster struct {
	lootfaults.Cluster
	d     *StoreDesign
	slot  *slots.Slot[*Slot] // nil: the slot did not open
	locks *lockService       // nil: the world's model
	once  sync.Once
}

var (
	_ lootfaults.ClusterCloser = (*storeCluster)(nil)
	_ lootfaults.LockCluster   = (*storeCluster)(nil)
)

// LockService implements lootfaults.LockCluster: the slot's lock service,
// else the world's model.
func (c *storeCluster) LockService() lootfaults.LockService {
	if c.locks == nil {
		return nil
	}
	return c.locks
}

// Close implements lootfaults.ClusterCloser: the slot is emptied and freed.
func (c *storeCluster) Close() {
	c.once.Do(func() {
		if err := c.d.pool.Release(c.slot); err != nil {
			c.d.pool.Fail(fmt.Errorf("%s: emptying a run's database: %w", c.d.name, err))
		}
	})
}
