package mysql

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// TestInTxRunsADeadlockVictimAgain: a transaction InnoDB picks as a
// deadlock victim (it rolled back whole) runs again and succeeds. The
// deadlock is made on purpose: fn locks row 1 then row 2, a heavier
// transaction (100 rows changed, so InnoDB rolls fn back, not it) holds
// row 2 and asks for row 1.
func TestInTxRunsADeadlockVictimAgain(t *testing.T) {
	reproduce := "; reproduce: go test ./ref/loot/mysql -run " + t.Name()
	s, err := Open(t.Context(), testserver.MariaDB(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	for _, stmt := range []string{
		"CREATE TABLE dl (k INT PRIMARY KEY, v INT NOT NULL) ENGINE = InnoDB",
		"INSERT INTO dl SELECT seq, 0 FROM seq_1_to_101",
	} {
		if _, err := s.db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	heavy, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer heavy.Rollback()
	if _, err := heavy.ExecContext(ctx, "UPDATE dl SET v = v + 1 WHERE k >= 2"); err != nil {
		t.Fatal(err)
	}
	heavyDone := make(chan error, 1)
	attempts := 0
	v, err := inTx(ctx, s, func(tx *sql.Tx) (int, error) {
		attempts++
		var v int
		if err := tx.QueryRowContext(ctx, "SELECT v FROM dl WHERE k = 1 FOR UPDATE").Scan(&v); err != nil {
			return 0, err
		}
		if attempts == 1 {
			go func() {
				time.Sleep(200 * time.Millisecond) // fn waits for row 2 by then
				var x int
				err := heavy.QueryRowContext(ctx, "SELECT v FROM dl WHERE k = 1 FOR UPDATE").Scan(&x)
				if err == nil {
					err = heavy.Commit()
				}
				heavyDone <- err
			}()
		}
		if err := tx.QueryRowContext(ctx, "SELECT v FROM dl WHERE k = 2 FOR UPDATE").Scan(&v); err != nil {
			return 0, err
		}
		return v, nil
	})
	if herr := <-heavyDone; herr != nil {
		t.Fatalf("the heavy transaction: %v (was it the victim?)%s", herr, reproduce)
	}
	if err != nil || attempts != 2 || v != 1 {
		t.Fatalf("inTx = %d, %v after %d attempts; want row 2 as the heavy transaction left it (1), after 2 attempts%s", v, err, attempts, reproduce)
	}
}

// TestInTxReleasesItsConnectionOnPanic: fn panicking (a caller's bug
// surfacing inside a transaction) used to leave the transaction open,
// holding its connection until its context ended, which for
// context.Background() is never: pool-size + 1 of them hung every later
// call. Each panic must roll back and go on to the caller, and every call
// must return within a second (a local round trip takes < 10ms).
func TestInTxReleasesItsConnectionOnPanic(t *testing.T) {
	const conns = 2
	s, err := Open(t.Context(), testserver.MariaDB(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.db.SetMaxOpenConns(conns)
	type result struct {
		recovered any
		err       error
	}
	call := func(fn func(tx *sql.Tx) (int, error)) (result, bool) {
		done := make(chan result, 1)
		go func() {
			var r result
			defer func() {
				r.recovered = recover()
				done <- r
			}()
			_, r.err = inTx(context.Background(), s, fn)
		}()
		select {
		case r := <-done:
			return r, true
		case <-time.After(time.Second):
			return result{}, false
		}
	}
	for i := range conns + 1 {
		r, ok := call(func(tx *sql.Tx) (int, error) { panic("fn's bug") })
		if !ok {
			t.Fatalf("inTx with a panicking fn #%d did not return within 1s: the earlier panics hold the pool's %d connections", i+1, conns)
		}
		if r.recovered != "fn's bug" {
			t.Fatalf("inTx with a panicking fn #%d: recovered %v (inTx: %v), want the panic to go on to the caller", i+1, r.recovered, r.err)
		}
	}
	r, ok := call(func(tx *sql.Tx) (int, error) {
		var one int
		return one, tx.QueryRow("SELECT 1").Scan(&one)
	})
	if !ok {
		t.Fatalf("inTx after %d panics did not answer within 1s: their transactions hold the pool's %d connections", conns+1, conns)
	}
	if r.err != nil || r.recovered != nil {
		t.Fatalf("inTx after %d panics: %v, %v", conns+1, r.err, r.recovered)
	}
	s.Close()
}
