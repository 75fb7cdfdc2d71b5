package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/pgrole"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
	"github.com/onceproof/onceproof/ref/storetest"
)

var tableSeq atomic.Int64

// newTable returns a fresh table name, so each subtest of one database
// starts from empty data without the cost of a database per subtest.
func newTable() string { return fmt.Sprintf("claims_%d", tableSeq.Add(1)) }

// harness opens handles on one table of url; every handle dials through its
// own Cutter so that Break cuts that handle's connections alone.
func harness(url string, batch bool) func(t *testing.T) storetest.Harness {
	return func(t *testing.T) storetest.Harness {
		table := newTable()
		return testserver.CutHarness(func(t *testing.T, c *testserver.Cutter) ref.PendingStore {
			s, err := postgres.Open(t.Context(), url, postgres.Options{
				Table: table, Batch: batch,
				Config: func(cfg *pgxpool.Config) {
					cfg.ConnConfig.DialFunc = c.DialContext
					// A pool pings a connection idle for over a second
					// before handing it out and replaces it quietly if
					// dead; Break must be seen by the next call, however
					// slow the test machine.
					cfg.ShouldPing = nil
					cfg.PingTimeout = 0
				},
			})
			if err != nil {
				t.Fatalf("postgres.Open: %v", err)
			}
			return s
		})
	}
}

func TestStoreConformance(t *testing.T) {
	storetest.Run(t, harness(testserver.Postgres(t), false))
}

func TestBatchedStoreConformance(t *testing.T) {
	storetest.Run(t, harness(testserver.Postgres(t), true))
}

func TestOpenRejectsBadTableName(t *testing.T) {
	url := testserver.Postgres(t)
	for _, name := range []string{"Claims", "1x", "x;drop table y", "a-b"} {
		if _, err := postgres.Open(t.Context(), url, postgres.Options{Table: name}); !errors.Is(err, postgres.ErrBadOptions) {
			t.Errorf("Open(Table=%q) = %v, want ErrBadOptions; reproduce: go test ./ref/postgres -run %s", name, err, t.Name())
		}
	}
}

func TestOpenRejectsForeignTable(t *testing.T) {
	url := testserver.Postgres(t)
	s, err := postgres.Open(t.Context(), url, postgres.Options{Table: "seed"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Pool().Exec(t.Context(), "CREATE TABLE foreign_claims (key text PRIMARY KEY, state int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := postgres.Open(t.Context(), url, postgres.Options{Table: "foreign_claims"}); !errors.Is(err, postgres.ErrSchema) {
		t.Fatalf("Open on a table with other columns = %v, want ErrSchema; reproduce: go test ./ref/postgres -run %s", err, t.Name())
	}
}

// TestOpenWithoutCreatePrivilegeNamesTheStep: a role that may not create
// the table gets one line saying which step failed and the server's
// reason, not the statement.
func TestOpenWithoutCreatePrivilegeNamesTheStep(t *testing.T) {
	url := pgrole.App(t, testserver.Postgres(t))
	_, err := postgres.Open(t.Context(), url, postgres.Options{Table: "claims"})
	if err == nil {
		t.Fatalf("Open as a role without CREATE succeeded; reproduce: go test ./ref/postgres -run %s", t.Name())
	}
	msg := err.Error()
	if !strings.Contains(msg, "creating table claims: ") || !strings.Contains(msg, "42501") ||
		strings.Contains(msg, "CREATE TABLE") || strings.Contains(msg, "\n") {
		t.Fatalf("Open as a role without CREATE = %q; want one line naming the step (creating table claims) and SQLSTATE 42501, without the SQL; reproduce: go test ./ref/postgres -run %s", msg, t.Name())
	}
}

// TestOpenNeedsOnlyDMLOnTablesMadeFromSchema: the documented Schema, run by
// another role, is what Open expects (no ErrSchema), and a role with only
// SELECT, INSERT and UPDATE on its tables opens the store and settles.
func TestOpenNeedsOnlyDMLOnTablesMadeFromSchema(t *testing.T) {
	admin := testserver.Postgres(t)
	ddl := strings.NewReplacer("{T}", "claims", "{G}", "claims_grants").Replace(postgres.Schema)
	url := pgrole.App(t, admin, ddl, "GRANT SELECT, INSERT, UPDATE ON claims, claims_grants TO {role}")
	s, err := postgres.Open(t.Context(), url, postgres.Options{Table: "claims"})
	if err != nil {
		t.Fatalf("Open as a role with SELECT, INSERT, UPDATE on tables made from Schema = %v; reproduce: go test ./ref/postgres -run %s", err, t.Name())
	}
	defer s.Close()
	sink := s.Sink(nil)
	settler := ref.NewSettler(ref.NewWindow(time.Minute, 1), s, ref.WithSink(sink))
	if res, err := settler.Apply(t.Context(), ref.KeyOf(1, 2), []byte("p"), time.Now()); err != nil || !res.Fresh {
		t.Fatalf("Apply as the application role = %+v, %v; want a fresh grant", res, err)
	}
	if n, err := sink.Count(t.Context()); err != nil || n != 1 {
		t.Fatalf("grants after one Apply = %d, %v; want 1", n, err)
	}
}

// TestConcurrentOpenCreatesSchemaOnce: several nodes starting at once must
// not fail on each other's CREATE TABLE.
func TestConcurrentOpenCreatesSchemaOnce(t *testing.T) {
	url := testserver.Postgres(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.Open(context.Background(), url, postgres.Options{})
			if err != nil {
				errs <- err
				return
			}
			s.Close()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Open: %v; reproduce: go test ./ref/postgres -run %s", err, t.Name())
	}
}

func TestDeliveredClaimer(t *testing.T) {
	storetest.RunDeliveredClaimer(t, harness(testserver.Postgres(t), false))
}

func TestBatchedDeliveredClaimer(t *testing.T) {
	storetest.RunDeliveredClaimer(t, harness(testserver.Postgres(t), true))
}
