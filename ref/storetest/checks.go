package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// base is the suite's virtual "now". Leases are whole seconds from it, so a
// store that keeps time at millisecond (Redis) or microsecond (PostgreSQL)
// precision round-trips them exactly; the suite requires at least
// millisecond precision.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// suiteOp is the Op of every key the suite makes (ref.KeyOf(suiteOp, n)), so
// keys are real 128-bit digests with unrelated halves.
const suiteOp ref.Op = 0x5107e

// key returns the suite's n-th key.
func key(n uint64) ref.Key { return ref.KeyOf(suiteOp, n) }

// payloadOf returns a payload that differs for every n.
func payloadOf(n uint64) []byte { return []byte(fmt.Sprintf("payload-%d", n)) }

// binaryPayload holds every byte value (NUL included) 16 times: 4096 bytes
// that a store keeping payloads as C strings or text would mangle.
func binaryPayload() []byte {
	p := make([]byte, 0, 256*16)
	for i := 0; i < 16; i++ {
		for b := 0; b < 256; b++ {
			p = append(p, byte(b))
		}
	}
	return p
}

var checks = []check{
	{"begin/creates-granted", checkBeginCreates},
	{"begin/returns-recorded-state", checkBeginReturnsRecorded},
	{"begin/atomic-under-64-goroutines", checkBeginAtomic},
	{"commit/forward-only", checkCommitForwardOnly},
	{"commit/unknown-key-not-found", checkCommitNotFound},
	{"commit/concurrent", checkCommitConcurrent},
	{"payload/copied-and-binary-safe", checkPayloadCopied},
	{"pending/lease-boundary", checkPendingLease},
	{"pending/only-granted", checkPendingOnlyGranted},
	{"pending/limit", checkPendingLimit},
	{"keys/128-bit-distinct", checkKeys128},
	{"handles/share-data", checkHandlesShare},
	{"durable/close-and-reopen", checkReopen},
	{"context/canceled", checkCanceled},
	{"close/err-closed", checkClosed},
	{"break/error-reaches-caller", checkBreak},
}

func begin(t *testing.T, s ref.Store, k ref.Key, payload []byte, lease time.Time) (ref.State, bool) {
	t.Helper()
	st, created, err := s.Begin(ctx(t), ref.Claim{Key: k, Payload: payload, LeaseUntil: lease})
	if err != nil {
		t.Fatalf("Begin(%v): %v", k, err)
	}
	return st, created
}

func commit(t *testing.T, s ref.Store, k ref.Key, st ref.State) {
	t.Helper()
	if err := s.Commit(ctx(t), k, st); err != nil {
		t.Fatalf("Commit(%v, %v): %v", k, st, err)
	}
}

// pending lists with a limit far above anything a check creates, keyed.
func pending(t *testing.T, s ref.PendingStore, now time.Time) map[ref.Key]ref.Record {
	t.Helper()
	const limit = 1 << 16
	recs, err := s.Pending(ctx(t), now, limit)
	if err != nil {
		t.Fatalf("Pending(%v, %d): %v", now, limit, err)
	}
	out := make(map[ref.Key]ref.Record, len(recs))
	for _, r := range recs {
		if _, dup := out[r.Key]; dup {
			t.Fatalf("Pending listed %v twice", r.Key)
		}
		if r.State != ref.StateGranted {
			t.Fatalf("Pending listed %v in state %v, want only Granted", r.Key, r.State)
		}
		out[r.Key] = r
	}
	return out
}

// wantState checks k's recorded state through Begin (which must not create
// it) and Pending (which lists it iff Granted and its lease ended by now).
func wantState(t *testing.T, s ref.PendingStore, k ref.Key, want ref.State) {
	t.Helper()
	st, created := begin(t, s, k, []byte("must-not-overwrite"), base.Add(time.Hour))
	if created || st != want {
		t.Fatalf("Begin(%v) on a recorded key = (%v, created=%v), want (%v, created=false)", k, st, created, want)
	}
}

func checkBeginCreates(t *testing.T, e *env) {
	s := e.open(t)
	st, created := begin(t, s, key(1), payloadOf(1), base)
	if !created || st != ref.StateGranted {
		t.Fatalf("first Begin = (%v, created=%v), want (Granted, created=true)", st, created)
	}
}

func checkBeginReturnsRecorded(t *testing.T, e *env) {
	s := e.open(t)
	k := key(1)
	begin(t, s, k, payloadOf(1), base)
	// A second Begin with another payload and a later lease must change
	// nothing: the record belongs to the first claimant.
	st, created := begin(t, s, k, payloadOf(2), base.Add(time.Hour))
	if created || st != ref.StateGranted {
		t.Fatalf("second Begin = (%v, created=%v), want (Granted, created=false)", st, created)
	}
	r, ok := pending(t, s, base)[k]
	if !ok {
		t.Fatalf("Pending(base) does not list %v: a second Begin moved its lease", k)
	}
	if !bytes.Equal(r.Payload, payloadOf(1)) || !r.LeaseUntil.Equal(base) {
		t.Fatalf("record after second Begin = payload %q lease %v, want the first claim's %q %v",
			r.Payload, r.LeaseUntil, payloadOf(1), base)
	}
	commit(t, s, k, ref.StateDelivered)
	wantState(t, s, k, ref.StateDelivered)
}

// checkBeginAtomic races 64 goroutines, spread over 4 handles (4 settler
// nodes on one database), on the same 16 keys, each in its own order: every
// key must be created exactly once and every other Begin must see it Granted.
// It is what finds a Begin that reads and then inserts in two round trips
// (the proof harness treats each store call as one atomic step, and cannot):
// its teeth are a store that pauses between its read and its insert.
func checkBeginAtomic(t *testing.T, e *env) {
	const (
		goroutines = 64 // the figure: a burst of duplicates at once
		handles    = 4
		keys       = 16
	)
	hs := make([]ref.PendingStore, handles)
	for i := range hs {
		hs[i] = e.open(t)
	}
	var (
		mu      sync.Mutex
		created [keys]int
		errs    []error
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := hs[g%handles]
			<-start
			for i := 0; i < keys; i++ {
				n := uint64((i + g) % keys) // rotate so goroutines collide on every key
				st, c, err := s.Begin(ctx(t), ref.Claim{Key: key(n), Payload: payloadOf(n), LeaseUntil: base})
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, fmt.Errorf("goroutine %d Begin(key %d): %w", g, n, err))
				case c:
					created[n]++
				case st != ref.StateGranted:
					errs = append(errs, fmt.Errorf("goroutine %d Begin(key %d) = (%v, created=false), want Granted", g, n, st))
				}
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Begin: %v", err)
	}
	for n, c := range created {
		if c != 1 {
			t.Errorf("key %d created %d times by %d concurrent Begins, want exactly 1", n, c, goroutines)
		}
	}
	if got := len(pending(t, hs[0], base)); got != keys {
		t.Errorf("Pending after the race lists %d records, want %d", got, keys)
	}
}

func checkCommitForwardOnly(t *testing.T, e *env) {
	s := e.open(t)
	k := key(1)
	begin(t, s, k, payloadOf(1), base)
	// At or below the recorded state: a no-op returning nil.
	commit(t, s, k, ref.StateNew)
	commit(t, s, k, ref.StateGranted)
	wantState(t, s, k, ref.StateGranted)
	if _, ok := pending(t, s, base)[k]; !ok {
		t.Fatalf("Commit(Granted) on a Granted record removed it from Pending")
	}
	commit(t, s, k, ref.StateDelivered)
	wantState(t, s, k, ref.StateDelivered)
	// Backwards must not move it; repeating must be nil (a retry after an
	// "outcome unknown" Commit does exactly that).
	commit(t, s, k, ref.StateGranted)
	wantState(t, s, k, ref.StateDelivered)
	if _, ok := pending(t, s, base.Add(time.Hour))[k]; ok {
		t.Fatalf("Pending lists %v after Commit(Delivered) and a backward Commit(Granted)", k)
	}
	commit(t, s, k, ref.StateNew)
	wantState(t, s, k, ref.StateDelivered)
	commit(t, s, k, ref.StateDelivered)
	wantState(t, s, k, ref.StateDelivered)
}

func checkCommitNotFound(t *testing.T, e *env) {
	s := e.open(t)
	begin(t, s, key(1), payloadOf(1), base)
	for _, st := range []ref.State{ref.StateDelivered, ref.StateGranted} {
		err := s.Commit(ctx(t), key(2), st)
		if !errors.Is(err, ref.ErrNotFound) {
			t.Fatalf("Commit(unclaimed key, %v) = %v, want an error wrapping ref.ErrNotFound", st, err)
		}
	}
	// Commit of a missing key must not create it.
	if st, created := begin(t, s, key(2), payloadOf(2), base); !created || st != ref.StateGranted {
		t.Fatalf("Begin after Commit of an unclaimed key = (%v, created=%v): the Commit created a record", st, created)
	}
}

// checkCommitConcurrent: the Settler that claimed a key and the Recovers on
// other nodes may all commit it at once, some with stale lower states.
func checkCommitConcurrent(t *testing.T, e *env) {
	const goroutines = 64
	hs := []ref.PendingStore{e.open(t), e.open(t)}
	k := key(1)
	begin(t, hs[0], k, payloadOf(1), base)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := ref.StateDelivered
			if g%3 == 0 {
				st = ref.StateGranted
			}
			if err := hs[g%2].Commit(ctx(t), k, st); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("goroutine %d Commit(%v): %w", g, st, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Commit: %v", err)
	}
	wantState(t, hs[1], k, ref.StateDelivered)
}

func checkPayloadCopied(t *testing.T, e *env) {
	s := e.open(t)
	bin := binaryPayload()
	buf := append([]byte(nil), bin...)
	begin(t, s, key(1), buf, base)
	for i := range buf {
		buf[i] = 'X' // the caller reuses its buffer after Begin
	}
	begin(t, s, key(2), nil, base)
	begin(t, s, key(3), []byte{}, base)

	recs := pending(t, s, base)
	r, ok := recs[key(1)]
	if !ok {
		t.Fatalf("Pending does not list %v", key(1))
	}
	if !bytes.Equal(r.Payload, bin) {
		t.Fatalf("payload came back changed (%d bytes, want the %d-byte original): Begin kept the caller's slice or mangled binary bytes",
			len(r.Payload), len(bin))
	}
	for _, n := range []uint64{2, 3} {
		if r, ok := recs[key(n)]; !ok || len(r.Payload) != 0 {
			t.Fatalf("empty payload of key %d: listed=%v payload %q, want listed with an empty payload", n, ok, r.Payload)
		}
	}
	for i := range r.Payload {
		r.Payload[i] = 'Y' // the caller owns what Pending returned
	}
	if r := pending(t, s, base)[key(1)]; !bytes.Equal(r.Payload, bin) {
		t.Fatalf("mutating a Record's payload changed the store's copy")
	}
}

func checkPendingLease(t *testing.T, e *env) {
	s := e.open(t)
	past, now, future := base.Add(-time.Second), base, base.Add(time.Second)
	begin(t, s, key(1), payloadOf(1), past)
	begin(t, s, key(2), payloadOf(2), now) // ends exactly at now: expired
	begin(t, s, key(3), payloadOf(3), future)
	begin(t, s, key(4), payloadOf(4), time.Time{}) // zero lease: expired at once
	// A lease in another time zone is the same instant.
	begin(t, s, key(5), payloadOf(5), past.In(time.FixedZone("UTC+9", 9*3600)))

	got := pending(t, s, now)
	for _, n := range []uint64{1, 2, 4, 5} {
		r, ok := got[key(n)]
		if !ok {
			t.Errorf("Pending(now) does not list key %d, whose lease ended at or before now", n)
			continue
		}
		if !bytes.Equal(r.Payload, payloadOf(n)) {
			t.Errorf("Pending(now) key %d payload %q, want %q", n, r.Payload, payloadOf(n))
		}
	}
	for n, want := range map[uint64]time.Time{1: past, 2: now, 5: past} {
		if r := got[key(n)]; !r.LeaseUntil.Equal(want) {
			t.Errorf("key %d LeaseUntil %v, want %v (the suite needs millisecond precision)", n, r.LeaseUntil, want)
		}
	}
	if _, ok := got[key(3)]; ok {
		t.Errorf("Pending(now) lists key 3 whose lease runs until now+1s: another node would complete a live claim")
	}
	if len(got) != 4 {
		t.Errorf("Pending(now) lists %d records, want 4", len(got))
	}
	if got := pending(t, s, future); len(got) != 5 {
		t.Errorf("Pending(now+1s) lists %d records, want all 5", len(got))
	}
}

func checkPendingOnlyGranted(t *testing.T, e *env) {
	s := e.open(t)
	for n := uint64(0); n < 6; n++ {
		begin(t, s, key(n), payloadOf(n), base)
		if n%2 == 0 {
			commit(t, s, key(n), ref.StateDelivered)
		}
	}
	got := pending(t, s, base.Add(time.Hour))
	for n := uint64(0); n < 6; n++ {
		_, ok := got[key(n)]
		if want := n%2 == 1; ok != want {
			t.Errorf("Pending lists key %d = %v, want %v (Delivered records are finished)", n, ok, want)
		}
	}
}

// checkPendingLimit: Recover asks for limit records and stops when it gets
// fewer, so a store must return exactly limit when at least that many are
// pending, and all of them when fewer are.
func checkPendingLimit(t *testing.T, e *env) {
	s := e.open(t)
	const total = 10
	for n := uint64(0); n < total; n++ {
		begin(t, s, key(n), payloadOf(n), base)
	}
	for _, tc := range []struct{ limit, want int }{{1, 1}, {3, 3}, {total, total}, {100, total}} {
		recs, err := s.Pending(ctx(t), base, tc.limit)
		if err != nil {
			t.Fatalf("Pending(limit=%d): %v", tc.limit, err)
		}
		if len(recs) != tc.want {
			t.Errorf("Pending(limit=%d) with %d pending returned %d records, want %d", tc.limit, total, len(recs), tc.want)
		}
	}
	// Draining in small batches, committing each, must finish: every batch
	// makes progress and nothing comes back once Delivered.
	done := map[ref.Key]bool{}
	for round := 0; ; round++ {
		if round > total {
			t.Fatalf("draining with limit 4 did not finish in %d rounds", total)
		}
		recs, err := s.Pending(ctx(t), base, 4)
		if err != nil {
			t.Fatalf("Pending(limit=4): %v", err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			if done[r.Key] {
				t.Fatalf("Pending listed %v again after Commit(Delivered)", r.Key)
			}
			done[r.Key] = true
			commit(t, s, r.Key, ref.StateDelivered)
		}
	}
	if len(done) != total {
		t.Errorf("draining completed %d records, want %d", len(done), total)
	}
}

// checkKeys128: stores key records by all 128 bits, so two requests whose
// 64-bit fingerprints collide are still two settlements.
func checkKeys128(t *testing.T, e *env) {
	s := e.open(t)
	ks := []ref.Key{
		{Hi: 0, Lo: 0}, {Hi: 0, Lo: 1}, {Hi: 1, Lo: 0},
		{Hi: key(1).Hi, Lo: 1}, {Hi: key(1).Hi, Lo: 2}, // a 64-bit fingerprint collision
		{Hi: 1 << 63, Lo: 0}, {Hi: 0, Lo: 1 << 63}, // sign bits, for stores using signed columns
		{Hi: math.MaxUint64, Lo: math.MaxUint64}, {Hi: math.MaxUint64, Lo: math.MaxUint64 - 1},
	}
	for i, k := range ks {
		if st, created := begin(t, s, k, payloadOf(uint64(i)), base); !created || st != ref.StateGranted {
			t.Fatalf("Begin(%v) = (%v, created=%v), want a new record: the store confused it with an earlier key", k, st, created)
		}
	}
	commit(t, s, ks[3], ref.StateDelivered)
	got := pending(t, s, base)
	if len(got) != len(ks)-1 {
		t.Fatalf("Pending lists %d records, want %d", len(got), len(ks)-1)
	}
	for i, k := range ks {
		r, ok := got[k]
		if i == 3 {
			if ok {
				t.Errorf("Pending lists %v after Commit(Delivered)", k)
			}
			continue
		}
		if !ok {
			t.Errorf("Pending does not list %v (Commit of %v, sharing its high 64 bits or not, finished it)", k, ks[3])
			continue
		}
		if !bytes.Equal(r.Payload, payloadOf(uint64(i))) {
			t.Errorf("%v payload %q, want %q", k, r.Payload, payloadOf(uint64(i)))
		}
	}
}

// checkHandlesShare: what one handle (node) writes, another sees at once.
func checkHandlesShare(t *testing.T, e *env) {
	a, b := e.open(t), e.open(t)
	begin(t, a, key(1), payloadOf(1), base)
	if st, created := begin(t, b, key(1), payloadOf(1), base); created || st != ref.StateGranted {
		t.Fatalf("Begin on a second handle = (%v, created=%v), want (Granted, false): handles do not share data", st, created)
	}
	commit(t, b, key(1), ref.StateDelivered)
	wantState(t, a, key(1), ref.StateDelivered)
}

func checkReopen(t *testing.T, e *env) {
	a := e.open(t)
	const total = 8
	for n := uint64(0); n < total; n++ {
		begin(t, a, key(n), payloadOf(n), base.Add(time.Duration(n)*time.Second))
		if n%2 == 0 {
			commit(t, a, key(n), ref.StateDelivered)
		}
	}
	if !e.close(t, a) {
		t.Log("store has no Close; checking a second handle while the first stays open")
	}
	b := e.open(t)
	got := pending(t, b, base.Add(time.Hour))
	for n := uint64(0); n < total; n++ {
		if n%2 == 0 {
			wantState(t, b, key(n), ref.StateDelivered)
			continue
		}
		r, ok := got[key(n)]
		if !ok {
			t.Fatalf("after reopen Pending does not list key %d", n)
		}
		if want := base.Add(time.Duration(n) * time.Second); !bytes.Equal(r.Payload, payloadOf(n)) || !r.LeaseUntil.Equal(want) {
			t.Fatalf("after reopen key %d = payload %q lease %v, want %q %v", n, r.Payload, r.LeaseUntil, payloadOf(n), want)
		}
		wantState(t, b, key(n), ref.StateGranted)
	}
}

func checkCanceled(t *testing.T, e *env) {
	s := e.open(t)
	begin(t, s, key(1), payloadOf(1), base)
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	if _, _, err := s.Begin(cctx, ref.Claim{Key: key(2), Payload: payloadOf(2), LeaseUntil: base}); !errors.Is(err, context.Canceled) {
		t.Errorf("Begin with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if err := s.Commit(cctx, key(1), ref.StateDelivered); !errors.Is(err, context.Canceled) {
		t.Errorf("Commit with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	if _, err := s.Pending(cctx, base, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("Pending with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	// A cancelled call must not poison the handle.
	wantState(t, s, key(1), ref.StateGranted)
	commit(t, s, key(1), ref.StateDelivered)
	wantState(t, s, key(1), ref.StateDelivered)
}

func checkClosed(t *testing.T, e *env) {
	s := e.open(t)
	begin(t, s, key(1), payloadOf(1), base)
	if !e.close(t, s) {
		t.Skip("store does not implement io.Closer")
	}
	if _, _, err := s.Begin(ctx(t), ref.Claim{Key: key(2), LeaseUntil: base}); !errors.Is(err, ref.ErrClosed) {
		t.Errorf("Begin after Close = %v, want an error wrapping ref.ErrClosed", err)
	}
	if err := s.Commit(ctx(t), key(1), ref.StateDelivered); !errors.Is(err, ref.ErrClosed) {
		t.Errorf("Commit after Close = %v, want an error wrapping ref.ErrClosed", err)
	}
	if _, err := s.Pending(ctx(t), base, 10); !errors.Is(err, ref.ErrClosed) {
		t.Errorf("Pending after Close = %v, want an error wrapping ref.ErrClosed", err)
	}
	// Closing one handle leaves the data to the others.
	wantState(t, e.open(t), key(1), ref.StateGranted)
}

// checkBreak: on a broken connection each operation must fail, not report a
// success it did not achieve; the data stays intact for other handles.
func checkBreak(t *testing.T, e *env) {
	if e.h.Break == nil {
		t.Skip("Harness.Break is nil")
	}
	setup := e.open(t)
	begin(t, setup, key(1), payloadOf(1), base)
	ops := []struct {
		name string
		call func(s ref.PendingStore) error
	}{
		{"Begin", func(s ref.PendingStore) error {
			_, _, err := s.Begin(ctx(t), ref.Claim{Key: key(2), Payload: payloadOf(2), LeaseUntil: base})
			return err
		}},
		{"Commit", func(s ref.PendingStore) error { return s.Commit(ctx(t), key(1), ref.StateDelivered) }},
		{"Pending", func(s ref.PendingStore) error { _, err := s.Pending(ctx(t), base, 10); return err }},
	}
	for _, op := range ops {
		s := e.open(t)
		// Use the handle once so a lazily connecting client has a connection to lose.
		if _, err := s.Pending(ctx(t), base, 1); err != nil {
			t.Fatalf("Pending before Break: %v", err)
		}
		e.h.Break(t, s)
		if err := op.call(s); err == nil {
			t.Errorf("%s on a broken handle returned nil: a dropped connection must reach the caller as an error", op.name)
		}
	}
	// Whatever the broken calls did is "outcome unknown"; the recorded data
	// must still be readable and consistent on a fresh handle.
	fresh := e.open(t)
	got := pending(t, fresh, base)
	if r, ok := got[key(1)]; ok && !bytes.Equal(r.Payload, payloadOf(1)) {
		t.Fatalf("after Break key 1 payload %q, want %q", r.Payload, payloadOf(1))
	}
	st, created := begin(t, fresh, key(1), payloadOf(1), base)
	if created || st == ref.StateNew {
		t.Fatalf("after Break Begin(key 1) = (%v, created=%v): a record written before Break was lost", st, created)
	}
}
