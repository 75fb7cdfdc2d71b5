package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/storetest"
)

// The kill -9 tests: storetest.RunCrash re-runs this binary as a child that
// settles against a SQLite file and is killed with SIGKILL at each fault
// point and at seeded random moments; then the test recovers from the file
// and checks the ledger exactly-once. Both sink forms run, Store.Sink (the
// record turns Delivered with the credit) and OpenSink (Commit does it), and
// the batched store (Options.Batch) with Store.Sink.

func TestMain(m *testing.M) {
	storetest.CrashChild(crashTargets) // returns unless this process is a crash child
	os.Exit(m.Run())
}

// TestCrashKillNine: see storetest.RunCrash. A failure prints the command
// that reruns it (random moments: with their seed).
func TestCrashKillNine(t *testing.T) { storetest.RunCrash(t, crashTargets) }

var crashTargets = map[string]storetest.CrashTarget{
	"store-sink":       crashTarget(true, false),
	"open-sink":        crashTarget(false, false),
	"store-sink-batch": crashTarget(true, true),
}

// crashAudit holds the parent's read-only handle on each run's file: the
// ledger is read directly, not through the handles the child or the
// recovering Settler use.
var crashAudit sync.Map // path -> *Store

// crashEffect counts applications per key in the sink's transaction, so a
// double credit shows as 2 and a credit without its grant key as 1 with no
// grant.
func crashEffect(ctx context.Context, tx *sql.Tx, key ref.Key, payload []byte) error {
	kb := key.Bytes()
	_, err := tx.ExecContext(ctx, `INSERT INTO crash_effects (key, n) VALUES (?, 1)
		ON CONFLICT (key) DO UPDATE SET n = n + 1`, kb[:])
	return err
}

const crashEffectsTable = `CREATE TABLE IF NOT EXISTS crash_effects (key BLOB PRIMARY KEY, n INTEGER NOT NULL)`

func crashTarget(storeSink, batch bool) storetest.CrashTarget {
	return storetest.CrashTarget{
		NewData: func(t *testing.T) string {
			path := filepath.Join(t.TempDir(), "crash.db")
			audit := openStore(t, path)
			if _, err := audit.DB().Exec(crashEffectsTable); err != nil {
				t.Fatalf("create crash_effects: %v", err)
			}
			crashAudit.Store(path, audit)
			t.Cleanup(func() { crashAudit.Delete(path) })
			return path
		},
		Open: func(path string) (ref.PendingStore, ref.Sink, func() error, error) {
			s, err := OpenWith(path, Options{Batch: batch})
			if err != nil {
				return nil, nil, nil, err
			}
			// The recovering process opens a file a SIGKILL interrupted:
			// SQLite's own check must find it whole.
			var ok string
			if err := s.DB().QueryRow(`PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
				s.Close()
				return nil, nil, nil, fmt.Errorf("integrity_check = %q, %v", ok, err)
			}
			if _, err := s.DB().Exec(crashEffectsTable); err != nil {
				s.Close()
				return nil, nil, nil, fmt.Errorf("create crash_effects: %w", err)
			}
			if storeSink {
				return s, s.Sink(crashEffect), s.Close, nil
			}
			k, err := OpenSink(path, crashEffect)
			if err != nil {
				s.Close()
				return nil, nil, nil, err
			}
			return s, k, func() error { return errors.Join(k.Close(), s.Close()) }, nil
		},
		Ledger: func(t *testing.T, path string, key ref.Key) storetest.LedgerEntry {
			t.Helper()
			audit := crashAuditOf(t, path)
			p, ok, err := audit.Sink(nil).Applied(t.Context(), key)
			if err != nil {
				t.Fatalf("Applied(%v): %v", key, err)
			}
			kb := key.Bytes()
			var n int
			err = audit.DB().QueryRow(`SELECT n FROM crash_effects WHERE key = ?`, kb[:]).Scan(&n)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatalf("read effect count of %v: %v", key, err)
			}
			return storetest.LedgerEntry{InLedger: ok, Payload: p, Effects: n}
		},
		State: func(t *testing.T, path string, key ref.Key) ref.State {
			t.Helper()
			v := &verifier{store: crashAuditOf(t, path)}
			return v.state(t, key)
		},
		SinkCommitsRecord: storeSink,
	}
}

func crashAuditOf(t *testing.T, path string) *Store {
	t.Helper()
	a, ok := crashAudit.Load(path)
	if !ok {
		t.Fatalf("no audit handle for %s (NewData did not run in this process)", path)
	}
	return a.(*Store)
}
