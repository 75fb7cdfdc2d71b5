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
