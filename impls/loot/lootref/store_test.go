package lootref_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// settable is a database's test clock that SetClock moves.
type settable struct {
	mu sync.Mutex
	t  time.Time
}

func (c *settable) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *settable) Set(_ context.Context, t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
	return nil
}

// table is one store the caller opened, emptied in place: a memory store
// on a settable clock, which empty replaces (as a TRUNCATE empties the
// tables). OnStore calls empty between runs only.
type table struct {
	lootref.Store
	clock   *settable
	empties int
}

func newTable() *table {
	t := &table{clock: &settable{}}
	t.Store = memory.NewStore(t.clock.Now)
	return t
}

func (t *table) empty(context.Context) error {
	t.Store = memory.NewStore(t.clock.Now)
	t.empties++
	return nil
}

// mapLocks is a lock server in memory whose keys never end by themselves,
// as a real server's do not within a run (lootref gives them an hour
// more than the world's ttl): the world's lock clock must end them.
type mapLocks struct {
	mu sync.Mutex
	m  map[string]string
}

func (l *mapLocks) Acquire(_ context.Context, key, token string, _ time.Duration) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, held := l.m[key]; held {
		return false, nil
	}
	l.m[key] = token
	return true, nil
}

func (l *mapLocks) Release(_ context.Context, key, token string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m[key] != token {
		return false, nil
	}
	delete(l.m, key)
	return true, nil
}

func (l *mapLocks) Get(_ context.Context, key string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[key], nil
}

func (l *mapLocks) Del(_ context.Context, key string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, held := l.m[key]
	delete(l.m, key)
	return held, nil
}

// On one store and lock server the caller opened and empties, OnStore
// must be Design exactly: the same history event for event (the world's
// lock clock ends the server's keys where the world's model ends them),
// and the store emptied before the first run and after each.
func TestOnStoreRunsLikeDesignOnOneEmptiedStore(t *testing.T) {
	st, locks := newTable(), &mapLocks{m: map[string]string{}}
	empty := func(ctx context.Context) error { clear(locks.m); return st.empty(ctx) }
	d := lootref.OnStore(lootref.Where{DB: "memory", Lock: "map"}, st, lootref.Options{SetClock: st.clock.Set, Empty: empty, Locks: locks})
	if d.Name() != "loot-ref@memory+map" {
		t.Errorf("Name = %q, want loot-ref@memory+map", d.Name())
	}
	runs := 0
	for _, f := range []engine.Family{lootfaults.Families.Clean, lootfaults.Families.Crash, lootfaults.Families.LockExpiry, lootfaults.Families.ConcurrentSettle, lootfaults.Families.CompensationRace} {
		for seed := uint64(1); seed <= 4; seed++ {
			s := lootfaults.World.Generate(f, seed)
			want := lootfaults.Run(lootref.Design{}, s, engine.RunOptions{})
			got := lootfaults.Run(d, s, engine.RunOptions{})
			runs++
			if diff := cmp.Diff(want.Events, got.Events); diff != "" {
				t.Fatalf("%s seed %d: loot-ref on one store differs from loot-ref (-loot-ref +on the store):\n%s\nreproduce: go test ./impls/loot/lootref -run TestOnStoreRunsLikeDesignOnOneEmptiedStore", f, seed, diff)
			}
		}
	}
	if st.empties != runs+1 || d.Runs() != runs || d.Live() != 0 || d.Err() != nil {
		t.Errorf("after %d runs: %d empties, Runs %d, Live %d, Err %v; want %d, %d, 0, nil", runs, st.empties, d.Runs(), d.Live(), d.Err(), runs+1, runs)
	}
}

// A real server's key outlives the world's ttl (by lockSlack): the world's
// lock clock must end it exactly at its ttl, not a nanosecond before, or a
// stalled settler's lock would hold (or vanish) where the model's does not.
func TestLockServiceEndsKeysByTheWorldsLockClock(t *testing.T) {
	locks := lootref.LockService(&mapLocks{m: map[string]string{}})
	if ok, err := locks.SetNX(0, "k", "a", time.Second); !ok || err != nil {
		t.Fatalf("SetNX on a free key = %v, %v; want true", ok, err)
	}
	if ok, _ := locks.SetNX(time.Second-1, "k", "b", time.Second); ok {
		t.Error("SetNX took a key 1ns before its ttl ended")
	}
	if ok, _ := locks.SetNX(time.Second, "k", "b", time.Second); !ok {
		t.Error("SetNX did not take a key whose ttl ended by the lock clock (the server's key, an hour longer, still there)")
	}
	if v, _ := locks.Get(time.Second, "k"); v != "b" {
		t.Errorf("Get = %q, want the new holder b", v)
	}
}

// The runs of a parallel matrix take the one store in turn: every cell
// holds, which it would not if two runs shared its rows.
func TestOnStoreRunsOneAtATimeInAParallelMatrix(t *testing.T) {
	st := newTable()
	d := lootref.OnStore(lootref.Where{DB: "memory"}, st, lootref.Options{SetClock: st.clock.Set, Empty: st.empty})
	m := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{d}, Families: []engine.Family{lootfaults.Families.Clean, lootfaults.Families.Crash, lootfaults.Families.Quantity}, N: 8, Parallel: 3})
	if ms := m.Mismatches(); len(ms) != 0 || d.Err() != nil || d.Live() != 0 {
		t.Errorf("loot-ref on one store under a 3-way parallel matrix: mismatches %v, Err %v, Live %d; want none\nreproduce: go test ./impls/loot/lootref -run TestOnStoreRunsOneAtATimeInAParallelMatrix", ms, d.Err(), d.Live())
	}
}

// A user's test on their own database is lootprops.TestDesign on OnStore:
// the kit runs every family it is given on the one store, each run
// emptied. 8 schedules a family: store-error runs a fraction of them
// (lootfaults.Runs), and at 5 its 2 runs reach no failing call.
func TestOnStoreUnderTheKit(t *testing.T) {
	st := newTable()
	d := lootref.OnStore(lootref.Where{DB: "memory"}, st, lootref.Options{SetClock: st.clock.Set, Empty: st.empty})
	lootprops.TestDesign(t, d, engine.Families(lootfaults.Families.Clean, lootfaults.Families.Crash, lootfaults.Families.StoreError), engine.Schedules(8, 1), engine.Dir(t.TempDir()))
	if err := d.Err(); err != nil {
		t.Errorf("store failures under the kit: %v", err)
	}
}
