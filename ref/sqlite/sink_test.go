package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// newCredit keeps a balance per account in the same file: the payload is
// "account amount" and the credit runs in the ledger's transaction.
func newCredit(db *sql.DB) (Effect, error) {
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS balances (account TEXT PRIMARY KEY, amount INTEGER NOT NULL)`); err != nil {
		return nil, fmt.Errorf("create balances: %w", err)
	}
	return func(ctx context.Context, tx *sql.Tx, key ref.Key, payload []byte) error {
		account, amount, err := parseCredit(payload)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO balances (account, amount) VALUES (?, ?)
			ON CONFLICT (account) DO UPDATE SET amount = amount + excluded.amount`, account, amount)
		return err
	}, nil
}

func parseCredit(payload []byte) (account string, amount int64, err error) {
	if _, err := fmt.Sscanf(string(payload), "%s %d", &account, &amount); err != nil {
		return "", 0, fmt.Errorf("bad credit payload %q: %w", payload, err)
	}
	return account, amount, nil
}

func creditEffect(t *testing.T, db *sql.DB) Effect {
	t.Helper()
	e, err := newCredit(db)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func balance(t *testing.T, db *sql.DB, account string) int64 {
	t.Helper()
	var n int64
	err := db.QueryRow(`SELECT amount FROM balances WHERE account = ?`, account).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0
	}
	if err != nil {
		t.Fatalf("read balance of %s: %v", account, err)
	}
	return n
}

func openStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSinkDeliversOncePerKey: redelivering a key (a retry, a Recover, 64
// racing nodes) never credits twice, and the ledger keeps the first payload.
func TestSinkDeliversOncePerKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openStore(t, path)
	sink := s.Sink(creditEffect(t, s.DB()))
	other, err := OpenSink(path, creditEffect(t, s.DB()))
	if err != nil {
		t.Fatalf("OpenSink: %v", err)
	}
	t.Cleanup(func() { other.Close() })

	ctx := t.Context()
	k := ref.KeyOf(1, 7)
	for i := 0; i < 3; i++ {
		if err := sink.Deliver(ctx, k, []byte("alice 5")); err != nil {
			t.Fatalf("Deliver #%d: %v", i, err)
		}
	}
	if got := balance(t, s.DB(), "alice"); got != 5 {
		t.Fatalf("alice = %d after delivering one key three times, want 5", got)
	}

	const goroutines = 64
	k2 := ref.KeyOf(1, 8)
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sk := sink
			if g%2 == 1 {
				sk = other // a second handle: another node on the same file
			}
			errs[g] = sk.Deliver(ctx, k2, []byte("bob 3"))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Deliver: %v", err)
	}
	if got := balance(t, s.DB(), "bob"); got != 3 {
		t.Fatalf("bob = %d after %d concurrent deliveries of one key, want 3", got, goroutines)
	}
	gs, err := sink.Grants(ctx)
	if err != nil {
		t.Fatalf("Grants: %v", err)
	}
	if len(gs) != 2 || gs[0].Key != k || gs[1].Key != k2 || gs[0].Seq >= gs[1].Seq {
		t.Fatalf("ledger = %+v, want exactly %v then %v", gs, k, k2)
	}
	if p, ok, err := other.Applied(ctx, k); err != nil || !ok || !bytes.Equal(p, []byte("alice 5")) {
		t.Fatalf("Applied(%v) = %q, %v, %v; want the first payload", k, p, ok, err)
	}
	if _, ok, err := other.Applied(ctx, ref.KeyOf(1, 9)); err != nil || ok {
		t.Fatalf("Applied(never delivered) = %v, %v; want false, nil", ok, err)
	}
}

// TestSinkEffectErrorRollsBackGrantKey: a failed credit leaves no grant key,
// so the retry credits (nothing lost); a credit never lands without its key.
func TestSinkEffectErrorRollsBackGrantKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openStore(t, path)
	credit := creditEffect(t, s.DB())
	fail := true
	sink := s.Sink(func(ctx context.Context, tx *sql.Tx, key ref.Key, payload []byte) error {
		if err := credit(ctx, tx, key, payload); err != nil {
			return err
		}
		if fail {
			return errors.New("injected failure after the credit statement")
		}
		return nil
	})
	k := ref.KeyOf(1, 1)
	if err := sink.Deliver(t.Context(), k, []byte("carol 4")); err == nil {
		t.Fatal("Deliver with a failing effect returned nil")
	}
	if _, ok, _ := sink.Applied(t.Context(), k); ok {
		t.Fatal("grant key recorded although its effect failed")
	}
	if got := balance(t, s.DB(), "carol"); got != 0 {
		t.Fatalf("carol = %d after a failed (rolled back) delivery, want 0", got)
	}
	fail = false
	if err := sink.Deliver(t.Context(), k, []byte("carol 4")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := balance(t, s.DB(), "carol"); got != 4 {
		t.Fatalf("carol = %d after the retry, want 4", got)
	}
}

// TestStoreSinkCommitsRecord: Store.Sink moves the record to Delivered with
// the credit, so a crash before the Settler's Commit leaves nothing pending;
// OpenSink leaves that to Commit.
func TestStoreSinkCommitsRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.db")
	s := openStore(t, path)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ka, kb := ref.KeyOf(1, 1), ref.KeyOf(1, 2)
	for _, k := range []ref.Key{ka, kb} {
		if _, created, err := s.Begin(t.Context(), ref.Claim{Key: k, Payload: []byte("dave 1"), LeaseUntil: now}); err != nil || !created {
			t.Fatalf("Begin: created=%v err=%v", created, err)
		}
	}
	if err := s.Sink(nil).Deliver(t.Context(), ka, []byte("dave 1")); err != nil {
		t.Fatalf("Store.Sink Deliver: %v", err)
	}
	plain, err := OpenSink(path, nil)
	if err != nil {
		t.Fatalf("OpenSink: %v", err)
	}
	defer plain.Close()
	if err := plain.Deliver(t.Context(), kb, []byte("dave 1")); err != nil {
		t.Fatalf("OpenSink Deliver: %v", err)
	}
	recs, err := s.Pending(t.Context(), now, 10)
	if err != nil {
		t.Fatalf("Pending: %v", err)
	}
	if len(recs) != 1 || recs[0].Key != kb {
		t.Fatalf("Pending = %+v, want only %v (the plain sink's key, not yet committed)", recs, kb)
	}
	// What the Settler reads to skip its Commit says the same.
	if !s.Sink(nil).CommitsRecord() || plain.CommitsRecord() {
		t.Fatalf("CommitsRecord: Store.Sink %v, OpenSink %v; want true, false", s.Sink(nil).CommitsRecord(), plain.CommitsRecord())
	}
}

// TestOpenRejectsBadInput: errors name the problem instead of opening
// something that is not a shared file.
func TestOpenRejectsBadInput(t *testing.T) {
	for _, p := range []string{"", ":memory:", "file::memory:?cache=shared", filepath.Join(t.TempDir(), "a?b.db")} {
		if _, err := Open(p); !errors.Is(err, ErrBadPath) {
			t.Errorf("Open(%q) = %v, want ErrBadPath", p, err)
		}
	}
	if _, err := OpenWith(filepath.Join(t.TempDir(), "o.db"), Options{Batch: true, MaxBatch: -1}); !errors.Is(err, ErrBadOptions) {
		t.Errorf("OpenWith(MaxBatch: -1) = %v, want ErrBadOptions", err)
	}
	s := openStore(t, filepath.Join(t.TempDir(), "r.db"))
	_, _, err := s.Begin(t.Context(), ref.Claim{Key: ref.KeyOf(1, 1), LeaseUntil: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)})
	if !errors.Is(err, ErrLeaseRange) {
		t.Errorf("Begin with a lease in year 3000 = %v, want ErrLeaseRange", err)
	}
	if _, _, err := s.Begin(t.Context(), ref.Claim{Key: ref.KeyOf(1, 1)}); err != nil {
		t.Fatalf("Begin: %v", err)
	}
	if err := s.Commit(t.Context(), ref.KeyOf(1, 1), ref.State(9)); !errors.Is(err, ErrBadState) {
		t.Errorf("Commit(State(9)) = %v, want ErrBadState", err)
	}
	if recs, err := s.Pending(t.Context(), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), 0); err != nil || len(recs) != 0 {
		t.Errorf("Pending(limit=0) = %d records, %v; want none (a negative or zero LIMIT must not mean all)", len(recs), err)
	}
	if recs, err := s.Pending(t.Context(), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC), -1); err != nil || len(recs) != 0 {
		t.Errorf("Pending(limit=-1) = %d records, %v; want none", len(recs), err)
	}
}

// TestSinkConformance runs storetest.RunSink on both sink forms. The
// harness's Effect counts applications per key in the sink's transaction,
// so the suite sees a double credit, not just a present grant key.
func TestSinkConformance(t *testing.T) {
	countEffect := func(ctx context.Context, tx *sql.Tx, key ref.Key, payload []byte) error {
		kb := key.Bytes()
		_, err := tx.ExecContext(ctx, `INSERT INTO effect_count (key, n) VALUES (?, 1)
			ON CONFLICT (key) DO UPDATE SET n = n + 1`, kb[:])
		return err
	}
	for _, form := range []string{"open-sink", "store-sink"} {
		t.Run("form="+form, func(t *testing.T) {
			storetest.RunSink(t, func(t *testing.T) storetest.SinkHarness {
				path := filepath.Join(t.TempDir(), "ledger.db")
				audit := openStore(t, path)
				if _, err := audit.DB().Exec(`CREATE TABLE effect_count (key BLOB PRIMARY KEY, n INTEGER NOT NULL)`); err != nil {
					t.Fatalf("create effect_count: %v", err)
				}
				return storetest.SinkHarness{
					Open: func(t *testing.T) ref.Sink {
						if form == "open-sink" {
							s, err := OpenSink(path, countEffect)
							if err != nil {
								t.Fatalf("OpenSink: %v", err)
							}
							return s
						}
						return openStore(t, path).Sink(countEffect)
					},
					Applied: func(t *testing.T, k ref.Key) ([]byte, int) {
						kb := k.Bytes()
						var n int
						err := audit.DB().QueryRow(`SELECT n FROM effect_count WHERE key = ?`, kb[:]).Scan(&n)
						if errors.Is(err, sql.ErrNoRows) {
							return nil, 0
						}
						if err != nil {
							t.Fatalf("read effect count: %v", err)
						}
						p, _, err := audit.Sink(nil).Applied(t.Context(), k)
						if err != nil {
							t.Fatalf("Applied: %v", err)
						}
						return p, n
					},
					Break: func(t *testing.T, s ref.Sink) {
						if err := s.(*Sink).h.db.Close(); err != nil {
							t.Fatalf("break: %v", err)
						}
					},
				}
			})
		})
	}
}
