package ref

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// errFlaky is the failure the fault-injecting wrappers below return.
var errFlaky = errors.New("injected store failure")

// flakyStore wraps a MemStore and fails chosen calls, before or after the
// inner call ran (a timeout after the write landed).
type flakyStore struct {
	*MemStore
	mu            sync.Mutex
	failBegin     int // fail the next n Begins before they run
	timeoutBegin  int // run the next n Begins, then report failure
	failCommit    int // fail the next n Commits before they run
	timeoutCommit int // run the next n Commits, then report failure
}

func (f *flakyStore) take(n *int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if *n > 0 {
		*n--
		return true
	}
	return false
}

func (f *flakyStore) Begin(ctx context.Context, c Claim) (State, bool, error) {
	if f.take(&f.failBegin) {
		return StateNew, false, errFlaky
	}
	st, created, err := f.MemStore.Begin(ctx, c)
	if err == nil && f.take(&f.timeoutBegin) {
		return StateNew, false, errFlaky
	}
	return st, created, err
}

func (f *flakyStore) BeginDelivered(ctx context.Context, c Claim) (State, bool, error) {
	if f.take(&f.failBegin) {
		return StateNew, false, errFlaky
	}
	st, created, err := f.MemStore.BeginDelivered(ctx, c)
	if err == nil && f.take(&f.timeoutBegin) {
		return StateNew, false, errFlaky
	}
	return st, created, err
}

// twoStepStore hides flakyStore's BeginDelivered, so Settle takes the
// Begin-then-Commit path.
type twoStepStore struct{ PendingStore }

func (f *flakyStore) Commit(ctx context.Context, key Key, st State) error {
	if f.take(&f.failCommit) {
		return errFlaky
	}
	err := f.MemStore.Commit(ctx, key, st)
	if err == nil && f.take(&f.timeoutCommit) {
		return errFlaky
	}
	return err
}

// flakySink fails the next n deliveries, after applying them when applyFirst.
type flakySink struct {
	*MemSink
	mu         sync.Mutex
	fail       int
	applyFirst bool
}

func (f *flakySink) Deliver(ctx context.Context, key Key, payload []byte) error {
	f.mu.Lock()
	fail := f.fail > 0
	if fail {
		f.fail--
	}
	f.mu.Unlock()
	if fail && !f.applyFirst {
		return errFlaky
	}
	if err := f.MemSink.Deliver(ctx, key, payload); err != nil {
		return err
	}
	if fail {
		return errFlaky
	}
	return nil
}

// retryUntilAcked plays the at-least-once sender: it retries every ms until
// Apply succeeds, inside the window's ttl (the retries the seed's order loses).
func retryUntilAcked(t *testing.T, s *Settler, key Key, payload []byte, at time.Time) (Result, int) {
	t.Helper()
	for i := 0; i < 50; i++ {
		res, err := s.Apply(context.Background(), key, payload, at.Add(time.Duration(i)*time.Millisecond))
		if err == nil {
			return res, i + 1
		}
	}
	t.Fatalf("not acked after 50 attempts")
	return Result{}, 0
}

// The seed marks the window before the durable claim: a failed claim leaves
// the fingerprint in the window and every retry inside the ttl is dropped as
// a duplicate, so the settlement is never delivered.
func TestApplyRetriesAfterFailedClaimAreNotDroppedByWindow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store *flakyStore
	}{
		{"claim-failed", &flakyStore{MemStore: NewMemStore(), failBegin: 3}},
		{"claim-timed-out-after-write", &flakyStore{MemStore: NewMemStore(), timeoutBegin: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := NewMemSink()
			s := NewSettler(NewWindow(time.Minute, 4), tc.store, WithSink(sink))
			key := KeyOf(0x0103, 42, 7, 9001)
			res, attempts := retryUntilAcked(t, s, key, []byte("credit 100"), base)
			if attempts != 4 {
				t.Fatalf("acked after %d attempts, want 4 (3 failures then success)", attempts)
			}
			if res.State != StateDelivered {
				t.Fatalf("result %+v, want Delivered", res)
			}
			if _, ok := sink.Applied(key); !ok || sink.Len() != 1 {
				t.Fatalf("sink applied %d keys (key present: %v), want exactly this one", sink.Len(), ok)
			}
			if st := s.Stats(); st.Errors != 3 {
				t.Fatalf("stats %+v, want Errors=3", st)
			}
			// Later duplicates are caught, and nothing is delivered twice.
			res, err := s.Apply(context.Background(), key, []byte("credit 100"), base.Add(time.Second))
			if err != nil || res.Fresh || res.Caught != LayerWindow {
				t.Fatalf("duplicate = %+v, %v; want caught by window", res, err)
			}
			if sink.Len() != 1 {
				t.Fatalf("sink has %d keys after duplicate, want 1", sink.Len())
			}
		})
	}
}

// The seed form has the same flaw: a failed Begin must not be remembered.
func TestSettleRetryAfterFailedClaimIsGranted(t *testing.T) {
	for _, oneStep := range []bool{true, false} {
		t.Run(map[bool]string{true: "one-step", false: "two-step"}[oneStep], func(t *testing.T) {
			var store Store = &flakyStore{MemStore: NewMemStore(), failBegin: 1}
			if !oneStep {
				store = twoStepStore{store.(PendingStore)}
			}
			s := NewSettler(NewWindow(time.Minute, 4), store)
			fp := FingerprintOf(0x0103, 42, 7, 9001)
			if st, fresh := s.Settle(fp, base); fresh || st != StateNew {
				t.Fatalf("failed claim = (%v, %v), want (New, false): retry", st, fresh)
			}
			if st, fresh := s.Settle(fp, base.Add(time.Millisecond)); !fresh || st != StateDelivered {
				t.Fatalf("retry = (%v, %v), want (Delivered, true); the seed drops it as a window duplicate", st, fresh)
			}
			if st, fresh := s.Settle(fp, base.Add(time.Hour)); fresh || st != StateDelivered {
				t.Fatalf("replay after the window = (%v, %v), want (Delivered, false)", st, fresh)
			}
		})
	}
}

// committingSink applies the effect and commits the record itself, as the
// database-backed sinks do in one transaction.
type committingSink struct {
	*MemSink
	store *countingStore
}

func (c committingSink) CommitsRecord() bool { return true }

func (c committingSink) Deliver(ctx context.Context, key Key, payload []byte) error {
	if err := c.MemSink.Deliver(ctx, key, payload); err != nil {
		return err
	}
	return c.store.MemStore.Commit(ctx, key, StateDelivered)
}

type countingStore struct {
	*MemStore
	commits int
}

func (c *countingStore) Commit(ctx context.Context, key Key, st State) error {
	c.commits++
	return c.MemStore.Commit(ctx, key, st)
}

func TestApplySkipsCommitWhenSinkCommitsRecord(t *testing.T) {
	store := &countingStore{MemStore: NewMemStore()}
	sink := committingSink{MemSink: NewMemSink(), store: store}
	s := NewSettler(NewWindow(time.Minute, 4), store, WithSink(sink))
	key := KeyOf(0x0103, 5, 5)
	if res, err := s.Apply(context.Background(), key, nil, base); err != nil || !res.Fresh {
		t.Fatalf("Apply = %+v, %v; want fresh", res, err)
	}
	if store.commits != 0 {
		t.Fatalf("Settler committed %d times; the sink already did", store.commits)
	}
	// The record is Delivered: a replay past the window is a store duplicate.
	res, err := s.Apply(context.Background(), key, nil, base.Add(time.Hour))
	if err != nil || res.Fresh || res.Caught != LayerStore || sink.Calls() != 1 {
		t.Fatalf("replay = %+v, %v, sink calls %d; want a store duplicate and one delivery", res, err, sink.Calls())
	}
}

func TestApplyCommitFailureIsCompletedByRetryWithoutSecondGrant(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store *flakyStore
		sink  *flakySink
		// attempts until the ack: 2 failures then success, except a commit
		// that landed before its timeout: the first retry finds Delivered.
		attempts int
	}{
		{"commit-failed", &flakyStore{MemStore: NewMemStore(), failCommit: 2}, &flakySink{MemSink: NewMemSink()}, 3},
		{"commit-timed-out", &flakyStore{MemStore: NewMemStore(), timeoutCommit: 2}, &flakySink{MemSink: NewMemSink()}, 2},
		{"sink-failed", &flakyStore{MemStore: NewMemStore()}, &flakySink{MemSink: NewMemSink(), fail: 2}, 3},
		{"sink-timed-out-after-apply", &flakyStore{MemStore: NewMemStore()}, &flakySink{MemSink: NewMemSink(), fail: 2, applyFirst: true}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSettler(NewWindow(time.Minute, 4), tc.store, WithSink(tc.sink))
			key := KeyOf(0x0201, 1, 2, 3)
			res, attempts := retryUntilAcked(t, s, key, []byte("p"), base)
			if attempts != tc.attempts || res.State != StateDelivered {
				t.Fatalf("acked %+v after %d attempts, want Delivered after %d", res, attempts, tc.attempts)
			}
			if tc.sink.Len() != 1 {
				t.Fatalf("sink applied %d keys, want 1", tc.sink.Len())
			}
			pending, err := tc.store.Pending(context.Background(), base.Add(time.Hour), 10)
			if err != nil || len(pending) != 0 {
				t.Fatalf("pending after ack = %v, %v; want none", pending, err)
			}
		})
	}
}

// crashingSink panics like a process dying between the claim and the
// delivery (or, with applyFirst, between the delivery and the commit).
type crashingSink struct {
	*MemSink
	applyFirst bool
	armed      bool
}

type crashed struct{}

func (c *crashingSink) Deliver(ctx context.Context, key Key, payload []byte) error {
	if c.armed {
		c.armed = false
		if c.applyFirst {
			_ = c.MemSink.Deliver(ctx, key, payload)
		}
		panic(crashed{})
	}
	return c.MemSink.Deliver(ctx, key, payload)
}

func applyUntilCrash(s *Settler, key Key, payload []byte, now time.Time) (didCrash bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crashed); !ok {
				panic(r)
			}
			didCrash = true
		}
	}()
	_, _ = s.Apply(context.Background(), key, payload, now)
	return false
}

// The seed never recovers StateGranted records. After a crash between Begin
// and Commit, a new node's Recover completes the grant through the
// idempotent sink: once if the effect never landed, not again if it did.
func TestRecoverCompletesGrantedRecordsExactlyOnce(t *testing.T) {
	for _, applyFirst := range []bool{false, true} {
		name := map[bool]string{false: "crash-before-sink", true: "crash-after-sink"}[applyFirst]
		t.Run(name, func(t *testing.T) {
			store := NewMemStore()
			sink := &crashingSink{MemSink: NewMemSink(), applyFirst: applyFirst, armed: true}
			key := KeyOf(0x0103, 9, 9, 9)
			dying := NewSettler(NewWindow(time.Minute, 4), store, WithSink(sink), WithLease(10*time.Second))
			if !applyUntilCrash(dying, key, []byte("credit 5"), base) {
				t.Fatal("the node did not crash")
			}
			// A new node with an empty window on the same store.
			s := NewSettler(NewWindow(time.Minute, 4), store, WithSink(sink), WithLease(10*time.Second))
			if n, err := s.Recover(context.Background(), base.Add(5*time.Second)); err != nil || n != 0 {
				t.Fatalf("Recover inside the lease = %d, %v; want 0: the owner may be alive", n, err)
			}
			n, err := s.Recover(context.Background(), base.Add(11*time.Second))
			if err != nil || n != 1 {
				t.Fatalf("Recover after the lease = %d, %v; want 1", n, err)
			}
			if p, ok := sink.Applied(key); !ok || string(p) != "credit 5" || sink.Len() != 1 {
				t.Fatalf("sink after recover: applied=%v payload=%q keys=%d; want the one credit", ok, p, sink.Len())
			}
			if got := s.Stats().Recovered; got != 1 {
				t.Fatalf("Recovered = %d, want 1", got)
			}
			// The sender's retry is now a duplicate, not a second grant.
			res, err := s.Apply(context.Background(), key, []byte("credit 5"), base.Add(12*time.Second))
			if err != nil || res.Fresh || res.State != StateDelivered {
				t.Fatalf("retry after recover = %+v, %v; want duplicate", res, err)
			}
			if sink.Len() != 1 {
				t.Fatalf("sink has %d keys, want 1", sink.Len())
			}
		})
	}
}

// A retry that finds a Granted record (its owner crashed) completes it
// through the sink instead of waiting for Recover.
func TestApplyRetryCompletesCrashedOwnersGrant(t *testing.T) {
	store := NewMemStore()
	sink := &crashingSink{MemSink: NewMemSink(), armed: true}
	key := KeyOf(0x0103, 1, 1, 1)
	if !applyUntilCrash(NewSettler(NewWindow(time.Minute, 4), store, WithSink(sink)), key, []byte("x"), base) {
		t.Fatal("no crash")
	}
	s := NewSettler(NewWindow(time.Minute, 4), store, WithSink(sink))
	res, err := s.Apply(context.Background(), key, []byte("x"), base.Add(time.Millisecond))
	if err != nil || res.Fresh || res.Caught != LayerStore || res.State != StateDelivered {
		t.Fatalf("retry = %+v, %v; want completed by the store layer", res, err)
	}
	if st := s.Stats(); st.Completed != 1 || sink.Len() != 1 {
		t.Fatalf("stats %+v, sink %d; want Completed=1 and one credit", st, sink.Len())
	}
}

func TestApplyWithoutSinkAndRecoverWithoutPendingStore(t *testing.T) {
	s := NewSettler(NewWindow(time.Minute, 1), NewMemStore())
	if _, err := s.Apply(context.Background(), KeyOf(1), nil, base); !errors.Is(err, ErrNoSink) {
		t.Fatalf("Apply without sink: %v, want ErrNoSink", err)
	}
	plain := struct{ Store }{NewMemStore()}
	s = NewSettler(NewWindow(time.Minute, 1), plain, WithSink(NewMemSink()))
	if _, err := s.Recover(context.Background(), base); !errors.Is(err, ErrNoPending) {
		t.Fatalf("Recover on a store without Pending: %v, want ErrNoPending", err)
	}
}

// Window hits are trusted only when all 128 key bits match: two keys sharing
// a fingerprint are both delivered.
func TestApplyFingerprintCollisionFallsThroughToStore(t *testing.T) {
	sink := NewMemSink()
	s := NewSettler(NewWindow(time.Minute, 4), NewMemStore(), WithSink(sink))
	a, b := Key{Hi: 7, Lo: 1}, Key{Hi: 7, Lo: 2}
	for _, k := range []Key{a, b} {
		res, err := s.Apply(context.Background(), k, nil, base)
		if err != nil || !res.Fresh {
			t.Fatalf("Apply(%v) = %+v, %v; want fresh", k, res, err)
		}
	}
	if sink.Len() != 2 || s.Stats().Collisions != 1 {
		t.Fatalf("sink %d keys, stats %+v; want 2 keys and 1 collision", sink.Len(), s.Stats())
	}
}

func TestApplyConcurrentDuplicatesDeliverOnce(t *testing.T) {
	sink := NewMemSink()
	s := NewSettler(NewWindow(time.Minute, 8), NewMemStore(), WithSink(sink))
	keys := make([]Key, 32)
	for i := range keys {
		keys[i] = KeyOf(0x0501, uint64(i))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := map[Key]int{}
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, k := range keys {
				res, err := s.Apply(context.Background(), k, []byte{1}, base)
				if err != nil {
					t.Error(err)
					return
				}
				if res.Fresh {
					mu.Lock()
					fresh[k]++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, k := range keys {
		if fresh[k] != 1 {
			t.Errorf("key %v fresh %d times, want 1", k, fresh[k])
		}
	}
	if sink.Len() != len(keys) {
		t.Fatalf("sink applied %d keys, want %d", sink.Len(), len(keys))
	}
	st := s.Stats()
	if st.Granted != len(keys) || st.Granted+st.WindowDup+st.StoreDup != 16*len(keys) {
		t.Fatalf("stats %+v do not add up to %d calls with %d grants", st, 16*len(keys), len(keys))
	}
}

// mapMemory is the simplest Memory: a map that never forgets.
type mapMemory struct {
	mu   sync.Mutex
	m    map[uint64]uint64
	puts int
}

func (m *mapMemory) Lookup(fp uint64, _ time.Time) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.m[fp]
	return v, ok
}

func (m *mapMemory) Put(fp, val uint64, _ time.Time) (uint64, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prev, ok := m.m[fp]
	m.m[fp] = val
	m.puts++
	return prev, ok
}

// A Settler on another Memory runs the same pipeline: the memory is marked
// only after the effect is durable, and its hit answers the retry.
func TestSettlerOnAnotherMemoryRunsTheSamePipeline(t *testing.T) {
	mem := &mapMemory{m: map[uint64]uint64{}}
	store := &flakyStore{MemStore: NewMemStore(), failBegin: 1}
	sink := NewMemSink()
	s := NewSettlerOn(mem, store, WithSink(sink))
	key := KeyOf(0x0104, 1, 2, 3)
	if _, err := s.Apply(context.Background(), key, []byte("x"), base); err == nil || mem.puts != 0 {
		t.Fatalf("a failed claim: err %v, memory marked %d times; want an error and no mark", err, mem.puts)
	}
	if res, err := s.Apply(context.Background(), key, []byte("x"), base); err != nil || !res.Fresh || mem.puts != 1 {
		t.Fatalf("the retry: %+v, %v, %d marks; want fresh and one mark", res, err, mem.puts)
	}
	if res, err := s.Apply(context.Background(), key, []byte("x"), base); err != nil || res.Caught != LayerWindow {
		t.Fatalf("the next retry: %+v, %v; want it caught by the memory", res, err)
	}
	if sink.Len() != 1 {
		t.Fatalf("sink has %d keys, want 1", sink.Len())
	}
}

// Recover needs no Settler: a sweeper process completes what a dead node
// left Granted.
func TestRecoverWithoutASettlerCompletesGrantedRecords(t *testing.T) {
	store := NewMemStore()
	sink := &crashingSink{MemSink: NewMemSink(), armed: true}
	key := KeyOf(0x0105, 1, 1, 1)
	if !applyUntilCrash(NewSettler(NewWindow(time.Minute, 4), store, WithSink(sink), WithLease(time.Second)), key, []byte("credit"), base) {
		t.Fatal("the node did not crash")
	}
	n, err := Recover(context.Background(), store, sink, base.Add(2*time.Second))
	if err != nil || n != 1 || sink.Len() != 1 {
		t.Fatalf("Recover = %d, %v, sink %d keys; want 1 completed", n, err, sink.Len())
	}
}
