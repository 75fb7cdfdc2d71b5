package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
	all := maps.Clone(crashTargets)
	maps.Copy(all, crashMutants)
	storetest.CrashChild(all) // returns unless this process is a crash child
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

// crashMutants break exactly-once in one way each; TestCrashKitCatchesMutants
// requires RunCrash to fail on every one, so the kill -9 test cannot pass
// by checking nothing.
var crashMutants = map[string]storetest.CrashTarget{
	// The credit runs in its own transaction on every delivery, outside
	// the grant key's: a redelivery after the kill credits twice.
	"mutant-sink-not-idempotent": mutateTarget(crashTarget(false, false), func(s ref.PendingStore, k ref.Sink) (ref.PendingStore, ref.Sink) {
		return s, &doubleCreditSink{Sink: k, db: s.(*Store).DB()}
	}),
	// Recover finds nothing: a claim whose owner died stays Granted until
	// the sender retries, and Recover's count shows it.
	"mutant-pending-empty": mutateTarget(crashTarget(false, false), func(s ref.PendingStore, k ref.Sink) (ref.PendingStore, ref.Sink) {
		return emptyPending{s}, k
	}),
}

func mutateTarget(tg storetest.CrashTarget, mutate func(ref.PendingStore, ref.Sink) (ref.PendingStore, ref.Sink)) storetest.CrashTarget {
	open := tg.Open
	tg.Open = func(path string) (ref.PendingStore, ref.Sink, func() error, error) {
		s, k, closeFn, err := open(path)
		if err != nil {
			return nil, nil, nil, err
		}
		s, k = mutate(s, k)
		return s, k, closeFn, nil
	}
	return tg
}

type doubleCreditSink struct {
	ref.Sink
	db *sql.DB
}

func (d *doubleCreditSink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := crashEffect(ctx, tx, key, payload); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return d.Sink.Deliver(ctx, key, payload)
}

type emptyPending struct{ ref.PendingStore }

func (emptyPending) Pending(context.Context, time.Time, int) ([]ref.Record, error) { return nil, nil }

const envCrashMutant = "ONCEPROOF_SQLITE_CRASH_MUTANT"

// TestCrashKitCatchesMutants runs RunCrash on each mutant in a child test
// process (a failing subtest cannot be observed from inside its own run)
// and requires it to fail.
func TestCrashKitCatchesMutants(t *testing.T) {
	if os.Getenv(envCrashMutant) != "" {
		t.Skip("child of TestCrashKitCatchesMutants: see TestCrashMutantChild")
	}
	for _, name := range slices.Sorted(maps.Keys(crashMutants)) {
		t.Run(name, func(t *testing.T) {
			// The fault points catch both mutants; the random runs would
			// only add seconds.
			run := "^TestCrashMutantChild$/^target=" + name + "$/^point="
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run="+run, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), envCrashMutant+"="+name)
			out, err := cmd.CombinedOutput()
			if err == nil || !strings.Contains(string(out), "--- FAIL: TestCrashMutantChild/target="+name) {
				t.Fatalf("RunCrash passed on %s: the kill -9 test lost its teeth.\nreproduce: %s=%s go test -count=1 -v -run '%s' ./ref/sqlite\nchild output:\n%s",
					name, envCrashMutant, name, run, out)
			}
		})
	}
}

// TestCrashMutantChild runs RunCrash on the mutant the environment names;
// it only runs as TestCrashKitCatchesMutants' child, where it must fail.
func TestCrashMutantChild(t *testing.T) {
	name := os.Getenv(envCrashMutant)
	if name == "" {
		t.Skip("runs only as the child of TestCrashKitCatchesMutants")
	}
	storetest.RunCrash(t, map[string]storetest.CrashTarget{name: crashMutants[name]})
}
