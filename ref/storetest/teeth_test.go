package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// The suite must catch a store that breaks any one rule of the contract.
// Each mutant below breaks exactly one; TestSuiteCatchesMutants runs the
// check that should catch it in a child process (a failing subtest cannot
// be observed from inside the same test binary run) and requires it to fail.
// The unmutated store must pass the whole suite, so a failure is the
// mutation's doing.

// mutation names one broken rule.
type mutation string

const (
	mutNone             mutation = ""
	mutBeginNotAtomic   mutation = "begin-not-atomic"     // check, pause, insert
	mutBeginOverwrites  mutation = "begin-overwrites"     // a second Begin replaces payload and lease
	mutCommitBackwards  mutation = "commit-backwards"     // sets any state it is given
	mutCommitUnknownNil mutation = "commit-unknown-nil"   // Commit of a missing key returns nil
	mutPayloadAliased   mutation = "payload-aliased"      // keeps the caller's slice
	mutPendingLeaseLt   mutation = "pending-lease-strict" // lease < now instead of <= now
	mutPendingAllLeases mutation = "pending-ignores-lease"
	mutPendingNoLimit   mutation = "pending-ignores-limit"
	mutPendingDelivered mutation = "pending-lists-delivered"
	mutKey64            mutation = "key-64-bit" // records keyed by the fingerprint alone
	mutIgnoresCtx       mutation = "ignores-context"
	mutCloseNoop        mutation = "close-noop" // calls after Close succeed
	mutBreakSilent      mutation = "break-silent"
	mutNoSharedData     mutation = "handles-not-shared" // each Open is a fresh empty store
)

// mutants maps each mutation to the check that must catch it.
var mutants = []struct {
	m     mutation
	check string
}{
	{mutBeginNotAtomic, "begin/atomic-under-64-goroutines"},
	{mutBeginOverwrites, "begin/returns-recorded-state"},
	{mutCommitBackwards, "commit/forward-only"},
	{mutCommitUnknownNil, "commit/unknown-key-not-found"},
	{mutPayloadAliased, "payload/copied-and-binary-safe"},
	{mutPendingLeaseLt, "pending/lease-boundary"},
	{mutPendingAllLeases, "pending/lease-boundary"},
	{mutPendingNoLimit, "pending/limit"},
	{mutPendingDelivered, "pending/only-granted"},
	{mutKey64, "keys/128-bit-distinct"},
	{mutIgnoresCtx, "context/canceled"},
	{mutCloseNoop, "close/err-closed"},
	{mutBreakSilent, "break/error-reaches-caller"},
	{mutNoSharedData, "handles/share-data"},
	{mutNoSharedData, "durable/close-and-reopen"},
}

const envMutant = "ONCEPROOF_STORETEST_MUTANT"

// TestSuitePassesUnmutatedStore: the mutants' base store is correct.
func TestSuitePassesUnmutatedStore(t *testing.T) {
	storetest.Run(t, mutantHarness(mutNone))
}

// TestSuiteCatchesMutants runs each mutant's check in a child process and
// requires that check to fail.
func TestSuiteCatchesMutants(t *testing.T) {
	if os.Getenv(envMutant) != "" {
		t.Skip("child of TestSuiteCatchesMutants: see TestMutantChild")
	}
	for _, mc := range mutants {
		t.Run(string(mc.m)+"/"+mc.check, func(t *testing.T) {
			parts := strings.Split(mc.check, "/")
			for i, p := range parts {
				parts[i] = "^" + regexp.QuoteMeta(p) + "$"
			}
			sub := strings.Join(parts, "/")
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutantChild$/"+sub, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), envMutant+"="+string(mc.m))
			out, err := cmd.CombinedOutput()
			failed := strings.Contains(string(out), "--- FAIL: TestMutantChild/"+mc.check)
			if err == nil || !failed {
				t.Fatalf("check %s passed on a store with mutation %q: the suite lost its teeth.\nreproduce: %s=%s go test -count=1 -v -run '^TestMutantChild$/%s' ./ref/storetest\nchild output:\n%s",
					mc.check, mc.m, envMutant, mc.m, sub, out)
			}
		})
	}
}

// TestMutantChild runs the suite on the mutant named by the environment; it
// only runs as TestSuiteCatchesMutants' child and is expected to fail there.
func TestMutantChild(t *testing.T) {
	m := mutation(os.Getenv(envMutant))
	if m == mutNone {
		t.Skip("runs only as the child of TestSuiteCatchesMutants")
	}
	storetest.Run(t, mutantHarness(m))
}

func mutantHarness(m mutation) func(t *testing.T) storetest.Harness {
	return func(t *testing.T) storetest.Harness {
		data := newMutData()
		return storetest.Harness{
			Open: func(t *testing.T) ref.PendingStore {
				if m == mutNoSharedData {
					return &mutStore{m: m, d: newMutData()}
				}
				return &mutStore{m: m, d: data}
			},
			Break: func(t *testing.T, s ref.PendingStore) { s.(*mutStore).broken = true },
		}
	}
}

// mutData is the "durable" data handles share.
type mutData struct {
	mu sync.Mutex
	m  map[ref.Key]*mutRecord
}

type mutRecord struct {
	st      ref.State
	payload []byte
	lease   time.Time
}

func newMutData() *mutData { return &mutData{m: map[ref.Key]*mutRecord{}} }

// mutStore is a correct store (a map behind a mutex) unless m says which
// rule to break.
type mutStore struct {
	m      mutation
	d      *mutData
	closed bool // set and read by the test goroutine only
	broken bool
}

func (s *mutStore) enter(ctx context.Context) error {
	if s.closed && s.m != mutCloseNoop {
		return ref.ErrClosed
	}
	if s.broken && s.m != mutBreakSilent {
		return errors.New("mutstore: connection broken")
	}
	if s.m != mutIgnoresCtx {
		return ctx.Err()
	}
	return nil
}

func (s *mutStore) key(k ref.Key) ref.Key {
	if s.m == mutKey64 {
		return ref.Key{Hi: k.Hi}
	}
	return k
}

func (s *mutStore) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	if err := s.enter(ctx); err != nil {
		return ref.StateNew, false, err
	}
	k := s.key(c.Key)
	payload := append([]byte(nil), c.Payload...)
	if s.m == mutPayloadAliased {
		payload = c.Payload
	}
	s.d.mu.Lock()
	r, ok := s.d.m[k]
	if ok && s.m != mutBeginOverwrites {
		st := r.st
		s.d.mu.Unlock()
		return st, false, nil
	}
	if s.m == mutBeginNotAtomic {
		// Check-then-insert: the pause lets the other goroutines' checks
		// pass before this insert lands.
		s.d.mu.Unlock()
		time.Sleep(time.Millisecond)
		s.d.mu.Lock()
	}
	s.d.m[k] = &mutRecord{st: ref.StateGranted, payload: payload, lease: c.LeaseUntil}
	s.d.mu.Unlock()
	if ok { // mutBeginOverwrites: reports the old record but replaced it
		return ref.StateGranted, false, nil
	}
	return ref.StateGranted, true, nil
}

func (s *mutStore) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	r, ok := s.d.m[s.key(key)]
	if !ok {
		if s.m == mutCommitUnknownNil {
			return nil
		}
		return fmt.Errorf("mutstore: %w", ref.ErrNotFound)
	}
	if st > r.st || s.m == mutCommitBackwards {
		r.st = st
	}
	return nil
}

func (s *mutStore) Pending(ctx context.Context, now time.Time, limit int) ([]ref.Record, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	s.d.mu.Lock()
	defer s.d.mu.Unlock()
	var out []ref.Record
	for k, r := range s.d.m {
		if len(out) >= limit && s.m != mutPendingNoLimit {
			break
		}
		expired := !r.lease.After(now)
		switch s.m {
		case mutPendingLeaseLt:
			expired = r.lease.Before(now)
		case mutPendingAllLeases:
			expired = true
		}
		granted := r.st == ref.StateGranted || s.m == mutPendingDelivered
		if granted && expired {
			out = append(out, ref.Record{Key: k, State: ref.StateGranted, Payload: append([]byte(nil), r.payload...), LeaseUntil: r.lease})
		}
	}
	return out, nil
}

func (s *mutStore) Close() error {
	s.closed = true
	return nil
}

// Sink mutants: each breaks one rule of ref.Sink's contract.
const (
	mutSinkTwice       mutation = "sink-applies-twice" // no grant-key check
	mutSinkAliased     mutation = "sink-payload-aliased"
	mutSinkKey64       mutation = "sink-key-64-bit"
	mutSinkIgnoresCtx  mutation = "sink-ignores-context"
	mutSinkCloseNoop   mutation = "sink-close-noop"
	mutSinkBreakSilent mutation = "sink-break-silent"
	mutSinkRacy        mutation = "sink-check-then-apply" // the grant-key check is not atomic with the effect
)

var sinkMutants = []struct {
	m     mutation
	check string
}{
	{mutSinkTwice, "deliver/applies-once"},
	{mutSinkRacy, "deliver/once-under-64-goroutines"},
	{mutSinkAliased, "deliver/payload-copied-and-binary-safe"},
	{mutSinkKey64, "keys/128-bit-distinct"},
	{mutSinkIgnoresCtx, "context/canceled"},
	{mutSinkCloseNoop, "close/err-closed"},
	{mutSinkBreakSilent, "break/error-reaches-caller"},
}

func TestSinkSuitePassesUnmutatedSink(t *testing.T) {
	storetest.RunSink(t, mutantSinkHarness(mutNone))
}

func TestSinkSuiteCatchesMutants(t *testing.T) {
	if os.Getenv(envMutant) != "" {
		t.Skip("child of TestSinkSuiteCatchesMutants: see TestMutantSinkChild")
	}
	for _, mc := range sinkMutants {
		t.Run(string(mc.m)+"/"+mc.check, func(t *testing.T) {
			parts := strings.Split(mc.check, "/")
			for i, p := range parts {
				parts[i] = "^" + regexp.QuoteMeta(p) + "$"
			}
			sub := strings.Join(parts, "/")
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestMutantSinkChild$/"+sub, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), envMutant+"="+string(mc.m))
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestMutantSinkChild/"+mc.check) {
				t.Fatalf("sink check %s passed on a sink with mutation %q: the suite lost its teeth.\nreproduce: %s=%s go test -count=1 -v -run '^TestMutantSinkChild$/%s' ./ref/storetest\nchild output:\n%s",
					mc.check, mc.m, envMutant, mc.m, sub, out)
			}
		})
	}
}

// TestMutantSinkChild runs the sink suite on the mutant named by the
// environment; it only runs as TestSinkSuiteCatchesMutants' child.
func TestMutantSinkChild(t *testing.T) {
	m := mutation(os.Getenv(envMutant))
	if m == mutNone {
		t.Skip("runs only as the child of TestSinkSuiteCatchesMutants")
	}
	storetest.RunSink(t, mutantSinkHarness(m))
}

func mutantSinkHarness(m mutation) func(t *testing.T) storetest.SinkHarness {
	return func(t *testing.T) storetest.SinkHarness {
		l := &mutLedger{payload: map[ref.Key][]byte{}, times: map[ref.Key]int{}}
		return storetest.SinkHarness{
			Open: func(t *testing.T) ref.Sink { return &mutSink{m: m, l: l} },
			Applied: func(t *testing.T, k ref.Key) ([]byte, int) {
				l.mu.Lock()
				defer l.mu.Unlock()
				return append([]byte(nil), l.payload[k]...), l.times[k]
			},
			Break: func(t *testing.T, s ref.Sink) { s.(*mutSink).broken = true },
		}
	}
}

type mutLedger struct {
	mu      sync.Mutex
	payload map[ref.Key][]byte
	times   map[ref.Key]int // applications of the effect
}

type mutSink struct {
	m      mutation
	l      *mutLedger
	closed bool
	broken bool
}

func (s *mutSink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	if s.closed && s.m != mutSinkCloseNoop {
		return ref.ErrClosed
	}
	if s.broken && s.m != mutSinkBreakSilent {
		return errors.New("mutsink: connection broken")
	}
	if err := ctx.Err(); err != nil && s.m != mutSinkIgnoresCtx {
		return err
	}
	k := key
	if s.m == mutSinkKey64 {
		k = ref.Key{Hi: key.Hi}
	}
	p := append([]byte(nil), payload...)
	if s.m == mutSinkAliased {
		p = payload
	}
	s.l.mu.Lock()
	_, applied := s.l.payload[k]
	if s.m == mutSinkRacy {
		s.l.mu.Unlock()
		time.Sleep(time.Millisecond) // another Deliver's check passes here
		s.l.mu.Lock()
	}
	if !applied || s.m == mutSinkTwice {
		if !applied {
			s.l.payload[k] = p
		}
		s.l.times[k]++
	}
	s.l.mu.Unlock()
	return nil
}

func (s *mutSink) Close() error {
	s.closed = true
	return nil
}
