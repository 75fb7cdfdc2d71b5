package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// RunDeliveredClaimer runs the ref.DeliveredClaimer checks as subtests of t,
// on handles from the same kind of harness Run takes (every handle must
// implement ref.DeliveredClaimer). The contract: BeginDelivered is Begin
// except that a record it creates is born StateDelivered (no payload to
// keep, never pending); an existing record is returned unchanged, and in
// particular a Granted one is never moved forward (its owner, or Recover,
// still has to deliver it).
func RunDeliveredClaimer(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Helper()
	runChecks(t, "storetest.RunDeliveredClaimer", deliveredChecks, newHarness)
}

var deliveredChecks = []check{
	{"delivered/creates-delivered", checkDeliveredCreates},
	{"delivered/keeps-existing", checkDeliveredKeepsExisting},
	{"delivered/atomic-under-64-goroutines", checkDeliveredAtomic},
	{"delivered/context-and-close", checkDeliveredCtxClose},
}

// claimer returns s as a DeliveredClaimer, failing the test if it is not.
func claimer(t *testing.T, s ref.PendingStore) ref.DeliveredClaimer {
	t.Helper()
	dc, ok := s.(ref.DeliveredClaimer)
	if !ok {
		t.Fatalf("storetest: %T does not implement ref.DeliveredClaimer", s)
	}
	return dc
}

func beginDelivered(t *testing.T, s ref.PendingStore, k ref.Key, payload []byte, lease time.Time) (ref.State, bool) {
	t.Helper()
	st, created, err := claimer(t, s).BeginDelivered(ctx(t), ref.Claim{Key: k, Payload: payload, LeaseUntil: lease})
	if err != nil {
		t.Fatalf("BeginDelivered(%v): %v", k, err)
	}
	return st, created
}

func checkDeliveredCreates(t *testing.T, e *env) {
	s := e.open(t)
	k := key(1)
	// An expired lease: were the record Granted, Pending would list it.
	if st, created := beginDelivered(t, s, k, payloadOf(1), base); !created || st != ref.StateDelivered {
		t.Fatalf("first BeginDelivered = (%v, created=%v), want (Delivered, created=true)", st, created)
	}
	if st, created := beginDelivered(t, s, k, payloadOf(2), base); created || st != ref.StateDelivered {
		t.Fatalf("second BeginDelivered = (%v, created=%v), want (Delivered, created=false)", st, created)
	}
	wantState(t, s, k, ref.StateDelivered)
	if _, ok := pending(t, s, base.Add(time.Hour))[k]; ok {
		t.Fatalf("Pending lists %v, born Delivered: Recover would deliver it", k)
	}
	// Commit of a state at or below the recorded one is a no-op.
	commit(t, s, k, ref.StateDelivered)
	commit(t, s, k, ref.StateGranted)
	wantState(t, s, k, ref.StateDelivered)
	// Other handles (nodes) see it.
	wantState(t, e.open(t), k, ref.StateDelivered)
}

func checkDeliveredKeepsExisting(t *testing.T, e *env) {
	s := e.open(t)
	granted, delivered := key(1), key(2)
	begin(t, s, granted, payloadOf(1), base)
	begin(t, s, delivered, payloadOf(2), base)
	commit(t, s, delivered, ref.StateDelivered)
	// A Granted record still has to be delivered by its owner or Recover:
	// BeginDelivered must neither move it forward nor touch its payload
	// or lease.
	if st, created := beginDelivered(t, s, granted, payloadOf(3), base.Add(time.Hour)); created || st != ref.StateGranted {
		t.Fatalf("BeginDelivered of a Granted record = (%v, created=%v), want (Granted, created=false)", st, created)
	}
	r, ok := pending(t, s, base)[granted]
	if !ok {
		t.Fatalf("Pending(base) no longer lists %v after BeginDelivered: it moved a Granted record (or its lease)", granted)
	}
	if !bytes.Equal(r.Payload, payloadOf(1)) || !r.LeaseUntil.Equal(base) {
		t.Fatalf("Granted record after BeginDelivered = payload %q lease %v, want the claim's %q %v",
			r.Payload, r.LeaseUntil, payloadOf(1), base)
	}
	wantState(t, s, granted, ref.StateGranted)
	if st, created := beginDelivered(t, s, delivered, payloadOf(4), base); created || st != ref.StateDelivered {
		t.Fatalf("BeginDelivered of a Delivered record = (%v, created=%v), want (Delivered, created=false)", st, created)
	}
}

// checkDeliveredAtomic races 64 goroutines on 4 handles over 16 keys, half
// of them claiming with Begin and half with BeginDelivered: each key must be
// created exactly once, and every other call must see the state its creator
// made (Granted when Begin won: a BeginDelivered that lost must not have
// moved it forward).
func checkDeliveredAtomic(t *testing.T, e *env) {
	const (
		goroutines = 64
		handles    = 4
		keys       = 16
	)
	hs := make([]ref.PendingStore, handles)
	for i := range hs {
		hs[i] = e.open(t)
		claimer(t, hs[i])
	}
	type seen struct {
		st      ref.State
		created bool
	}
	var (
		mu    sync.Mutex
		calls [keys][]seen
		errs  []error
		wg    sync.WaitGroup
		start = make(chan struct{})
	)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := hs[g%handles]
			<-start
			for i := 0; i < keys; i++ {
				n := uint64((i + g) % keys)
				c := ref.Claim{Key: key(n), Payload: payloadOf(n), LeaseUntil: base}
				var (
					st      ref.State
					created bool
					err     error
				)
				if (g/handles)%2 == 0 {
					st, created, err = s.(ref.DeliveredClaimer).BeginDelivered(ctx(t), c)
				} else {
					st, created, err = s.Begin(ctx(t), c)
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("goroutine %d claim of key %d: %w", g, n, err))
				} else {
					calls[n] = append(calls[n], seen{st, created})
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent claims: %v", err)
	}
	granted := 0
	for n, cs := range calls {
		var creators []seen
		for _, c := range cs {
			if c.created {
				creators = append(creators, c)
			}
		}
		if len(creators) != 1 {
			t.Errorf("key %d created %d times by %d concurrent claims, want exactly 1", n, len(creators), goroutines)
			continue
		}
		want := creators[0].st
		if want == ref.StateGranted {
			granted++
		}
		for _, c := range cs {
			if c.st != want {
				t.Errorf("key %d: a claim saw %v (created=%v), but its creator made it %v", n, c.st, c.created, want)
				break
			}
		}
		wantState(t, hs[0], key(uint64(n)), want)
	}
	if got := len(pending(t, hs[0], base)); got != granted {
		t.Errorf("Pending after the race lists %d records, want %d (the keys a Begin created)", got, granted)
	}
}

func checkDeliveredCtxClose(t *testing.T, e *env) {
	s := e.open(t)
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	if _, _, err := claimer(t, s).BeginDelivered(cctx, ref.Claim{Key: key(1), LeaseUntil: base}); !errors.Is(err, context.Canceled) {
		t.Errorf("BeginDelivered with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	// A cancelled call must not poison the handle.
	beginDelivered(t, s, key(2), nil, base)
	if !e.close(t, s) {
		return // no Close to check
	}
	if _, _, err := claimer(t, s).BeginDelivered(ctx(t), ref.Claim{Key: key(3), LeaseUntil: base}); !errors.Is(err, ref.ErrClosed) {
		t.Errorf("BeginDelivered after Close = %v, want an error wrapping ref.ErrClosed", err)
	}
	wantState(t, e.open(t), key(2), ref.StateDelivered)
}
