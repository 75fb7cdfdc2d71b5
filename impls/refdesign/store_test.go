package refdesign_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/internal/slots"
	"github.com/onceproof/onceproof/props"
	"github.com/onceproof/onceproof/ref"
)

// memOpener opens a MemStore per run and counts opens and cleanups.
type memOpener struct {
	mu             sync.Mutex
	opens, cleanup int
}

func (o *memOpener) open(_ context.Context, run int) (ref.PendingStore, func() error, error) {
	o.mu.Lock()
	o.opens++
	o.mu.Unlock()
	return ref.NewMemStore(), func() error {
		o.mu.Lock()
		o.cleanup++
		o.mu.Unlock()
		return nil
	}, nil
}

// On a MemStore opened per run, OnStores must be Design exactly: the same
// history event for event (the store is the only difference, and it is the
// same store), and every run's store cleaned up once.
func TestOnStoresOnMemStoreRunsLikeDesign(t *testing.T) {
	var o memOpener
	d := refdesign.OnStores("mem", o.open)
	if d.Name() != "ref@mem" {
		t.Errorf("Name = %q, want ref@mem", d.Name())
	}
	runs := 0
	for _, f := range []faults.Family{faults.Families.Clean, faults.Families.Crash, faults.Families.StoreError, faults.Families.TimeoutSuccess, faults.Families.MultiNode, faults.Families.WindowExpiry} {
		for seed := uint64(1); seed <= 5; seed++ {
			s := faults.World.Generate(f, seed)
			want := faults.Run(refdesign.Design{}, s, faults.RunOptions{})
			got := faults.Run(d, s, faults.RunOptions{})
			runs++
			if diff := cmp.Diff(want.Events, got.Events); diff != "" || got.Exhausted != want.Exhausted {
				t.Fatalf("%s seed %d: ref@mem's history differs from ref's (-ref +ref@mem):\n%s\nreproduce: go test ./impls/refdesign -run TestOnStoresOnMemStoreRunsLikeDesign", f, seed, diff)
			}
		}
	}
	if o.opens != runs || o.cleanup != runs || d.Runs() != runs || d.Live() != 0 || d.Err() != nil {
		t.Errorf("after %d runs: %d opens, %d cleanups, Runs %d, Live %d, Err %v; want %d, %d, %d, 0, nil",
			runs, o.opens, o.cleanup, d.Runs(), d.Live(), d.Err(), runs, runs, runs)
	}
}

// A store that does not open, or does not clean up, is reported by Err
// (the run itself sees every store call fail; it must not panic).
func TestOnStoresReportsOpenAndCleanupFailures(t *testing.T) {
	s := faults.World.Generate(faults.Families.Clean, 1)

	down := errors.New("connection refused")
	d := refdesign.OnStores("down", func(context.Context, int) (ref.PendingStore, func() error, error) { return nil, nil, down })
	for range slots.MaxKeptErrs + 2 {
		faults.Run(d, s, faults.RunOptions{})
	}
	err := d.Err()
	if !errors.Is(err, down) || !strings.Contains(err.Error(), "ref@down: opening the store of run 0") ||
		!strings.Contains(err.Error(), "and 2 more store failures") || d.Live() != 0 {
		t.Errorf("Err after %d failed opens = %v (Live %d); want the first %d, the count of the rest, Live 0", slots.MaxKeptErrs+2, err, d.Live(), slots.MaxKeptErrs)
	}

	leak := errors.New("drop table: permission denied")
	d = refdesign.OnStores("leaky", func(context.Context, int) (ref.PendingStore, func() error, error) {
		return ref.NewMemStore(), func() error { return leak }, nil
	})
	h := faults.Run(d, s, faults.RunOptions{})
	if err := d.Err(); !errors.Is(err, leak) || !strings.Contains(err.Error(), "ref@leaky: cleaning up") {
		t.Errorf("Err after a failed cleanup = %v, want it", err)
	}
	if want := faults.Run(refdesign.Design{}, s, faults.RunOptions{}); !cmp.Equal(h.Events, want.Events) {
		t.Error("a failing cleanup changed the run's history; it runs after the last event")
	}
}

// forgetful breaks the ref.Store contract: every Begin creates the claim in
// a store of its own, so the record is never there for Commit, Pending or
// the next claim.
type forgetful struct{ ref.PendingStore }

func (f forgetful) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	return ref.NewMemStore().Begin(ctx, c)
}

// The matrix on a store is a check of the store: one that breaks the
// contract makes ref's cells disagree with its declaration, which is what
// `onceproof matrix -store` exits 1 on.
func TestOnStoresExposesAStoreThatBreaksTheContract(t *testing.T) {
	d := refdesign.OnStores("forgetful", func(context.Context, int) (ref.PendingStore, func() error, error) {
		return forgetful{ref.NewMemStore()}, func() error { return nil }, nil
	})
	m := props.RunMatrix(props.MatrixOptions{Designs: []faults.Design{d}, Families: []faults.Family{faults.Families.Clean, faults.Families.Crash}, N: 3})
	if ms := m.Mismatches(); len(ms) != 2 {
		t.Errorf("ref on a store that forgets its claims: %d mismatching cells %v, want both (clean, crash)\nreproduce: go test ./impls/refdesign -run TestOnStoresExposesAStoreThatBreaksTheContract", len(ms), ms)
	}
}

// emptiable is one store the caller opened, emptied in place: a MemStore
// that its empty function replaces (as a TRUNCATE empties a table).
type emptiable struct {
	ref.PendingStore
	empties int
}

func newEmptiable() *emptiable { return &emptiable{PendingStore: ref.NewMemStore()} }

// empty replaces the store's records; OnStore calls it between runs only,
// so no run is on the store.
func (e *emptiable) empty(context.Context) error {
	e.PendingStore = ref.NewMemStore()
	e.empties++
	return nil
}

// On one store the caller opened and empties, OnStore must be Design
// exactly: the same history event for event, and the store emptied before
// the first run and after each.
func TestOnStoreRunsLikeDesignOnOneEmptiedStore(t *testing.T) {
	st := newEmptiable()
	d := refdesign.OnStore("mem", st, st.empty)
	runs := 0
	for _, f := range []faults.Family{faults.Families.Clean, faults.Families.Crash, faults.Families.DeepReplay, faults.Families.MultiNode} {
		for seed := uint64(1); seed <= 5; seed++ {
			s := faults.World.Generate(f, seed)
			want := faults.Run(refdesign.Design{}, s, faults.RunOptions{})
			got := faults.Run(d, s, faults.RunOptions{})
			runs++
			if diff := cmp.Diff(want.Events, got.Events); diff != "" {
				t.Fatalf("%s seed %d: ref@mem on one store differs from ref (-ref +ref@mem):\n%s\nreproduce: go test ./impls/refdesign -run TestOnStoreRunsLikeDesignOnOneEmptiedStore", f, seed, diff)
			}
		}
	}
	if st.empties != runs+1 || d.Runs() != runs || d.Live() != 0 || d.Err() != nil {
		t.Errorf("after %d runs: %d empties, Runs %d, Live %d, Err %v; want %d, %d, 0, nil", runs, st.empties, d.Runs(), d.Live(), d.Err(), runs+1, runs)
	}
}

// The runs of a parallel matrix take the one store in turn: every cell
// holds, which it would not if two runs shared the store's records.
func TestOnStoreRunsOneAtATimeInAParallelMatrix(t *testing.T) {
	st := newEmptiable()
	d := refdesign.OnStore("mem", st, st.empty)
	m := props.RunMatrix(props.MatrixOptions{Designs: []faults.Design{d}, Families: []faults.Family{faults.Families.Clean, faults.Families.Duplicate, faults.Families.Crash, faults.Families.MultiNode}, N: 10, Parallel: 4})
	if ms := m.Mismatches(); len(ms) != 0 || d.Err() != nil || d.Live() != 0 {
		t.Errorf("ref on one store under a 4-way parallel matrix: mismatches %v, Err %v, Live %d; want none\nreproduce: go test ./impls/refdesign -run TestOnStoreRunsOneAtATimeInAParallelMatrix", ms, d.Err(), d.Live())
	}
}

// A store that is not emptied between runs carries one run's records into
// the next (the schedules reuse players and matches): the matrix must show
// it, or OnStore's empty would be decoration.
func TestOnStoreWithoutEmptyingIsCaught(t *testing.T) {
	st := ref.NewMemStore()
	d := refdesign.OnStore("unemptied", st, func(context.Context) error { return nil })
	m := props.RunMatrix(props.MatrixOptions{Designs: []faults.Design{d}, Families: []faults.Family{faults.Families.Clean}, N: 10})
	if len(m.Mismatches()) != 1 {
		t.Errorf("ref on a store never emptied holds under clean: the runs do not start from an empty store\nreproduce: go test ./impls/refdesign -run TestOnStoreWithoutEmptyingIsCaught")
	}
}

// A user's test on their own store is props.TestDesign on OnStore: the kit
// runs every family it is given on the one store, each run emptied.
func TestOnStoreUnderTheKit(t *testing.T) {
	st := newEmptiable()
	d := refdesign.OnStore("mem", st, st.empty)
	props.TestDesign(t, d, props.Families(faults.Families.Clean, faults.Families.Crash, faults.Families.StoreError), props.Schedules(5, 1), props.Dir(t.TempDir()))
	if err := d.Err(); err != nil {
		t.Errorf("store failures under the kit: %v", err)
	}
}
