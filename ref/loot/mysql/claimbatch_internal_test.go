package mysql

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
)

// openTeam is S-OPEN's team in claimWorld: room for a burst of 64
// callers' first claims.
const openTeam = 100

// claimClockBase is the test clock's start: any instant at microseconds.
var claimClockBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// A mixed batch: each claim's answer, and every claim on record after it,
// is what the same claims give sent alone one by one in the batch's order
// on a twin database, and the batch costs one round trip beside the claims
// that must go alone (a repeat of a key already in the statement, a
// session number that is not UTF-8).
func TestClaimBatchAnswersAsClaimsAlone(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test ./ref/loot/mysql -run '^" + t.Name() + "$'"
	qs := []claimReq{
		{"S-OPEN", 1, loot.Need},                           // lands, a first claim
		{"S-OPEN", 2, loot.Greed},                          // lands over the claim before the batch: a repeat
		{"S-OPEN", openTeam + 1, loot.Need},                // not a member
		{"S-LATE", 1, loot.Need},                           // past its deadline
		{"S-SETTLING", 1, loot.Need},                       // settling
		{"S-NEW", 1, loot.Need},                            // OPEN, not claiming yet
		{"S-NONE", 1, loot.Need},                           // no session
		{"S-OPEN", 1, loot.Greed},                          // again, in the batch: after the first
		{"S-OPEN", 3, loot.Pass},                           // lands
		{"S\xff", 1, loot.Need},                            // not UTF-8: the server's data error, alone
		{"S-OPEN", 3, loot.Pass},                           // again, the same intent
		{"S-CANCELED", 1, loot.Need},                       // canceled
		{"S-😀é", 1, loot.Need},                             // lands: four-byte UTF-8 through JSON
		{"s-open", 1, loot.Need},                           // no session: codes compare byte for byte
		{"S-OPEN ", 1, loot.Need},                          // no session: no padding either
		{"S-OPEN" + strings.Repeat("x", 70), 1, loot.Need}, // no session: over VARCHAR(64), never cut to fit
	}
	batched, calls := claimWorld(t, false)
	single, _ := claimWorld(t, false)
	rs := make([]coalesce.Result[claimed], len(qs))
	batched.runClaims(t.Context(), qs, rs)
	// Alone: the repeats (7, 10) and the session number not UTF-8 (9).
	if got, want := calls.String(), "1 batched, 3 alone"; got != want {
		t.Errorf("the batch of %d claims sent %s CALLs, want %s%s", len(qs), got, want, reproduce)
	}
	for i, q := range qs {
		want, err := single.claimOne(t.Context(), q)
		if got, want := answer(rs[i].Val, rs[i].Err), answer(want, err); got != want {
			t.Errorf("claim %d (%q by %d, %s) batched = %s\nalone = %s%s", i, q.no, q.p, q.in, got, want, reproduce)
		}
	}
	sameClaims(t, batched, single, reproduce, "S-OPEN", "S-LATE", "S-SETTLING", "S-NEW", "S-CANCELED", "S-😀é")
}

// A batch whose statement the server refuses as a data error (here a CHECK:
// an intent no caller of Claim can send, since Claim validates it first)
// wrote nothing, and runs again claim by claim, so only the bad claim fails.
func TestClaimBatchWithABadClaimFailsOnlyIt(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test ./ref/loot/mysql -run '^" + t.Name() + "$'"
	qs := []claimReq{{"S-OPEN", 1, loot.Need}, {"S-OPEN", 3, "BOGUS"}, {"S-OPEN", 2, loot.Pass}}
	batched, calls := claimWorld(t, false)
	single, _ := claimWorld(t, false)
	rs := make([]coalesce.Result[claimed], len(qs))
	batched.runClaims(t.Context(), qs, rs)
	if got, want := calls.String(), "1 batched, 3 alone"; got != want {
		t.Errorf("sent %s CALLs, want %s: the batch refused, then each claim alone%s", got, want, reproduce)
	}
	for i, q := range qs {
		want, err := single.claimOne(t.Context(), q)
		if got, want := answer(rs[i].Val, rs[i].Err), answer(want, err); got != want {
			t.Errorf("claim %d (%q by %d, %s) batched = %s\nalone = %s%s", i, q.no, q.p, q.in, got, want, reproduce)
		}
		if (err != nil) != (i == 1) || i == 1 && !isDataError(err) {
			t.Errorf("claim %d alone = %v; want only claim 1 refused, as a data error%s", i, err, reproduce)
		}
	}
	sameClaims(t, batched, single, reproduce, "S-OPEN")
}

// A batch chosen as a deadlock's victim (InnoDB rolled its statement back
// whole) runs again claim by claim, each answered as alone. The deadlock:
// another transaction holds the row of a claim the batch repeats, the batch
// waits for it while holding the session row shared, and the other then
// wants the session row exclusively; InnoDB rolls back the transaction
// with fewer undo records, the batch (a few claims) against the other's 500
// scratch rows.
func TestClaimBatchDeadlockVictimRunsClaimByClaim(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test ./ref/loot/mysql -run '^" + t.Name() + "$'"
	ctx := t.Context()
	batched, calls := claimWorld(t, false)
	single, _ := claimWorld(t, false)
	if _, err := batched.db.ExecContext(ctx, "CREATE TABLE claim_heavy (i INT PRIMARY KEY) ENGINE = InnoDB"); err != nil {
		t.Fatal(err)
	}
	other, err := batched.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	for _, stmt := range []string{
		"INSERT INTO claim_heavy WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 500) SELECT i FROM n",
		"UPDATE loot_intent SET requests = requests + 1 WHERE session_no = 'S-OPEN' AND player_id = 2",
	} {
		if _, err := other.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	qs := []claimReq{{"S-OPEN", 1, loot.Need}, {"S-OPEN", 2, loot.Greed}, {"S-OPEN", 3, loot.Pass}}
	done := make(chan []coalesce.Result[claimed])
	go func() {
		rs := make([]coalesce.Result[claimed], len(qs))
		batched.runClaims(ctx, qs, rs)
		done <- rs
	}()
	// The batch's INSERT still running means it waits for the other's row:
	// it has nothing else to wait for (and the server's lock wait timeout,
	// testserver's or the default 50 s, is far off).
	for running, start := 0, time.Now(); running == 0; time.Sleep(10 * time.Millisecond) {
		if err := batched.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE info LIKE 'INSERT INTO loot_intent%'").Scan(&running); err != nil {
			t.Fatal(err)
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the batch's INSERT did not start within 10 s%s", reproduce)
		}
	}
	if _, err := other.ExecContext(ctx, "UPDATE loot_session SET fence = fence WHERE session_no = 'S-OPEN'"); err != nil {
		t.Fatalf("the other transaction closing the cycle: %v; want the batch to be the deadlock's victim%s", err, reproduce)
	}
	if err := other.Rollback(); err != nil {
		t.Fatal(err)
	}
	rs := <-done
	if got, want := calls.String(), "1 batched, 3 alone"; got != want {
		t.Errorf("sent %s CALLs, want %s: the batch a deadlock's victim, then each claim alone%s", got, want, reproduce)
	}
	for i, q := range qs {
		want, err := single.claimOne(ctx, q)
		if got, want := answer(rs[i].Val, rs[i].Err), answer(want, err); got != want {
			t.Errorf("claim %d (%q by %d, %s) batched = %s\nalone = %s%s", i, q.no, q.p, q.in, got, want, reproduce)
		}
	}
	sameClaims(t, batched, single, reproduce, "S-OPEN")
}

// answer is a claim's answer as text; a data error is its number alone
// (the server's message names the database, and its row number is not
// the same from one connection to the next).
func answer(c claimed, err error) string {
	var me *mysql.MySQLError
	if isDataError(err) && errors.As(err, &me) {
		return fmt.Sprintf("%+v data error %d", c, me.Number)
	}
	return fmt.Sprintf("%+v %v", c, err)
}

// sameClaims fails t unless a and b hold the same claims of each session.
func sameClaims(t *testing.T, a, b *Store, reproduce string, sessions ...string) {
	t.Helper()
	for _, no := range sessions {
		ca, errA := a.Claims(t.Context(), no)
		cb, errB := b.Claims(t.Context(), no)
		if got, want := fmt.Sprintf("%+v %v", ca, errA), fmt.Sprintf("%+v %v", cb, errB); got != want {
			t.Errorf("claims of %s after the batch: %s\nafter the claims alone: %s%s", no, got, want, reproduce)
		}
	}
}

// claimWorld is a store (on a new database, reading a test clock) holding
// a session of each kind a claim can meet, opened with Options.Batch if
// batch, and the count of the claim CALLs its connections send from then
// on. At the clock's final time, base + 2s:
//   - S-OPEN: CLAIMING until base + 1h, members 1 to openTeam; 2 claimed
//     NEED.
//   - S-LATE: CLAIMING, its deadline base + 1s passed; member 1.
//   - S-SETTLING: settling since base + 2s, member 1.
//   - S-NEW: OPEN, member 1; S-CANCELED: canceled, member 1.
//   - S-😀é: as S-OPEN, member 1.
func claimWorld(t *testing.T, batch bool) (*Store, *claimCalls) {
	t.Helper()
	ctx := t.Context()
	dsn := testserver.MariaDB(t)
	clock, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clock.Close() })
	const table = "claim_clock"
	for _, stmt := range []string{
		"CREATE TABLE " + table + " (id TINYINT PRIMARY KEY, at DATETIME(6) NOT NULL) ENGINE = InnoDB",
		"INSERT INTO " + table + " VALUES (1, '" + claimClockBase.Format("2006-01-02 15:04:05.000000") + "')",
	} {
		if _, err := clock.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	calls := new(claimCalls)
	s, err := Open(ctx, dsn, Options{ClockTable: table, Batch: batch, Config: func(cfg *mysql.Config) {
		var d net.Dialer
		cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return countedConn{c, calls}, nil
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	open := func(no string, deadline time.Duration, members ...loot.PlayerID) {
		t.Helper()
		_, _, err := s.Open(ctx, loot.Spec{No: no, Dungeon: "D", Loot: "L", Quantity: 1,
			Deadline: claimClockBase.Add(deadline), Rule: loot.RuleCount, Members: members})
		must(nil, err)
		if no != "S-NEW" {
			must(s.StartClaiming(ctx, no))
		}
	}
	team := make([]loot.PlayerID, openTeam)
	for i := range team {
		team[i] = loot.PlayerID(i + 1)
	}
	open("S-OPEN", time.Hour, team...)
	open("S-LATE", time.Second, 1)
	open("S-SETTLING", time.Second, 1)
	open("S-NEW", time.Hour, 1)
	open("S-CANCELED", time.Hour, 1)
	open("S-😀é", time.Hour, 1)
	must(s.Cancel(ctx, "S-CANCELED"))
	_, _, err = s.Claim(ctx, "S-OPEN", 2, loot.Need)
	must(nil, err)
	must(clock.ExecContext(ctx, "UPDATE "+table+" SET at = at + INTERVAL 2 SECOND"))
	must(s.BeginSettle(ctx, "S-SETTLING", time.Minute))
	calls.batched.Store(0)
	calls.alone.Store(0)
	return s, calls
}

// claimCalls counts the packets sent that CALL loot_claim_batch_v2
// (batched) and loot_claim_v1 (alone), under any clock's name: a command
// is one packet (bench_test.go's writes says why).
type claimCalls struct{ batched, alone atomic.Int64 }

func (c *claimCalls) String() string {
	return fmt.Sprintf("%d batched, %d alone", c.batched.Load(), c.alone.Load())
}

// countedConn counts the claim CALLs written on it.
type countedConn struct {
	net.Conn
	calls *claimCalls
}

func (c countedConn) Write(p []byte) (int, error) {
	switch {
	case bytes.Contains(p, []byte("CALL loot_claim_batch_v2")):
		c.calls.batched.Add(1)
	case bytes.Contains(p, []byte("CALL loot_claim_v1")):
		c.calls.alone.Add(1)
	}
	return c.Conn.Write(p)
}
