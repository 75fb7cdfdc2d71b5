package mysql_test

import (
	"database/sql"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/mysql"
	"github.com/onceproof/onceproof/ref/loot/mysql/docsql"
)

// Each test here runs one schedule twice on MariaDB: with the source
// document's SQL (docsql) and with the reference store. Where the
// reference departs from the document, the document's half must break (if
// it stops breaking, the test fails: the claim it documents no longer
// holds on this server); where the document's own tests hold, both halves
// must hold.

// breaks fails t unless the document's SQL broke as the test expects.
func breaks(t *testing.T, broke bool, what string) {
	t.Helper()
	if !broke {
		t.Fatalf("the document's SQL no longer shows %s on this server; reproduce: go test ./ref/loot/mysql -run '%s'", what, t.Name())
	}
}

// docDB returns the document's tables in a new database, its connection
// in UTC (the document keeps one zone; which one does not matter here).
func docDB(t *testing.T) (*docsql.DB, *sql.DB) {
	t.Helper()
	db, err := sql.Open("mysql", testserver.MariaDB(t)+"?parseTime=true&loc=UTC&time_zone=%27%2B00:00%27&interpolateParams=true")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := docsql.New(db)
	if err := d.CreateSchema(t.Context()); err != nil {
		t.Fatal(err)
	}
	return d, db
}

// dbNow reads the database's clock, whole seconds as the document's
// DATETIME keeps them.
func dbNow(t *testing.T, db *sql.DB) time.Time {
	t.Helper()
	var now time.Time
	if err := db.QueryRowContext(t.Context(), "SELECT NOW()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

// refWorld is the reference store on a new database with the test clock,
// and a Service node on it.
type refWorld struct {
	loot  string // the loot code of the sessions claiming opens
	clock *testClock
	store *mysql.Store
	svc   *loot.Service
	dsn   string
}

func newRefWorld(t *testing.T) *refWorld {
	t.Helper()
	dsn := testserver.MariaDB(t)
	w := &refWorld{loot: "SWORD_001", clock: newTestClock(t, dsn), dsn: dsn}
	w.store = open(t, dsn)
	w.svc = w.node(t, w.store)
	return w
}

// node is a Service on handle s.
func (w *refWorld) node(t *testing.T, s *mysql.Store) *loot.Service {
	t.Helper()
	svc, err := loot.New(loot.Config{Store: s, Inventory: s.Inventory(), Fairness: memory.NewHistory(), SettleLease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// claiming opens a CLAIMING session of members, deadline one minute ahead
// of the test clock.
func (w *refWorld) claiming(t *testing.T, no string, quantity int, members ...loot.PlayerID) {
	t.Helper()
	_, err := w.svc.Open(t.Context(), loot.Spec{No: no, Dungeon: "ABYSS-3", Loot: w.loot, Quantity: quantity,
		Deadline: w.clock.now(t).Add(time.Minute), Rule: loot.RuleCount, Members: members})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.svc.StartClaiming(t.Context(), no); err != nil {
		t.Fatal(err)
	}
}

func (w *refWorld) claim(t *testing.T, no string, p loot.PlayerID, in loot.Intent) {
	t.Helper()
	if _, err := w.svc.Claim(t.Context(), loot.Caller{Player: p}, loot.ClaimRequest{Session: no, Intent: in}); err != nil {
		t.Fatalf("claim %s by %d: %v", no, p, err)
	}
}

// winners settles no (the deadline must have passed) and returns the
// winners in rank order.
func (w *refWorld) winners(t *testing.T, no string) []loot.PlayerID {
	t.Helper()
	st, err := w.svc.Settle(t.Context(), no)
	if err != nil {
		t.Fatalf("settle %s: %v", no, err)
	}
	var ps []loot.PlayerID
	for _, g := range st.Grants {
		ps = append(ps, g.Player)
	}
	return ps
}

// TestSecondPrecisionLetsALaterClaimWin: 1002 claims NEED, and 1001 the
// same 500 ms later, in the same second. The document's created_at is a
// DATETIME: both rows read 12:00:00, the three ORDER BY keys tie, and
// MariaDB returns the tie in the order of the index it reads
// (uk_session_player: player id), so the later claim wins. The reference
// keeps microseconds, so the first claim wins; and two claims in the very
// same microsecond are ordered by player id, whatever order they were
// written in.
func TestSecondPrecisionLetsALaterClaimWin(t *testing.T) {
	doc, db := docDB(t)
	at := time.Date(2026, 3, 1, 12, 0, 0, 200*int(time.Millisecond), time.UTC)
	if err := doc.CreateSession(t.Context(), "S", "ABYSS-3", "SWORD_001", 1, dbNow(t, db).Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, p := range []int64{1002, 1001} {
		if err := doc.UpsertIntent(t.Context(), docsql.NewIntent("S", p, "NEED", 0, at.Add(time.Duration(i)*500*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	var distinct int
	if err := db.QueryRowContext(t.Context(), "SELECT COUNT(DISTINCT created_at) FROM loot_intent WHERE session_no = 'S'").Scan(&distinct); err != nil {
		t.Fatal(err)
	}
	ranked, err := doc.SelectRanked(t.Context(), "S")
	if err != nil {
		t.Fatal(err)
	}
	breaks(t, distinct == 1 && ranked[0] == 1001, "claims 500 ms apart tied on created_at, the later one ranked first (MariaDB's plan for selectRanked may have changed: EXPLAIN it)")

	w := newRefWorld(t)
	w.claiming(t, "S", 1, 1001, 1002)
	w.claim(t, "S", 1002, loot.Need)
	w.clock.advance(t, 500*time.Millisecond)
	w.claim(t, "S", 1001, loot.Need)
	w.clock.advance(t, time.Minute)
	if got := w.winners(t, "S"); !slices.Equal(got, []loot.PlayerID{1002}) {
		t.Errorf("reference winners %v, want [1002], the first claim; reproduce: go test ./ref/loot/mysql -run %s", got, t.Name())
	}

	// The same microsecond, written in opposite orders in two sessions:
	// the same winner.
	w.claiming(t, "A", 1, 1001, 1002)
	w.claiming(t, "B", 1, 1001, 1002)
	for _, c := range []struct {
		no string
		p  loot.PlayerID
	}{{"A", 1002}, {"A", 1001}, {"B", 1001}, {"B", 1002}} {
		w.claim(t, c.no, c.p, loot.Need)
	}
	w.clock.advance(t, time.Minute)
	if a, b := w.winners(t, "A"), w.winners(t, "B"); !slices.Equal(a, b) || !slices.Equal(a, []loot.PlayerID{1001}) {
		t.Errorf("reference winners of one claim set written in two orders: %v and %v, want [1001] both; reproduce: go test ./ref/loot/mysql -run %s", a, b, t.Name())
	}
}

// TestCheckThenWriteLandsAfterSettling: the document's submitIntent checks
// the session (CLAIMING, deadline ahead by the application's clock), then
// upserts. Between the two, the deadline passes and a settler locks,
// ranks, grants and closes; the upsert lands in a CLOSED session, on
// record but never ranked, and the NEED that should have won is lost to a
// GREED. The reference judges status, deadline and membership in the
// claim's own statement under a shared lock on the session row, so the
// claim is refused (TestClaimWaitsForTheSettleCAS holds the CAS open
// while a claim arrives).
func TestCheckThenWriteLandsAfterSettling(t *testing.T) {
	doc, db := docDB(t)
	deadline := dbNow(t, db).Add(-time.Second) // due by the database's clock
	if err := doc.CreateSession(t.Context(), "S", "ABYSS-3", "SWORD_001", 1, deadline); err != nil {
		t.Fatal(err)
	}
	if ok, err := doc.SubmitIntent(t.Context(), docsql.NewIntent("S", 1001, "GREED", 0, deadline.Add(-5*time.Second))); err != nil || !ok {
		t.Fatalf("1001's claim: %v, %v", ok, err)
	}
	late := docsql.NewIntent("S", 1002, "NEED", 0, deadline.Add(-time.Second))
	checked, err := doc.CheckIntent(t.Context(), "S", late.CreatedAt) // 1002's check passes...
	if err != nil {
		t.Fatal(err)
	}
	settled, granted, err := doc.Settle(t.Context(), "S", "SWORD_001", 1) // ...a settler runs...
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.UpsertIntent(t.Context(), late); err != nil { // ...and the write lands after.
		t.Fatal(err)
	}
	var status string
	var winner, claims int64
	if err := db.QueryRowContext(t.Context(), `SELECT s.status, g.player_id, (SELECT COUNT(*) FROM loot_intent WHERE session_no = 'S')
		FROM loot_session s JOIN loot_grant g ON g.session_no = s.session_no WHERE s.session_no = 'S'`).Scan(&status, &winner, &claims); err != nil {
		t.Fatal(err)
	}
	breaks(t, checked && settled && granted == 1 && status == "CLOSED" && winner == 1001 && claims == 2,
		"a NEED claim recorded in a CLOSED session after a GREED won")

	w := newRefWorld(t)
	w.claiming(t, "S", 1, 1001, 1002)
	w.claim(t, "S", 1001, loot.Greed)
	w.clock.advance(t, time.Minute)
	if got := w.winners(t, "S"); !slices.Equal(got, []loot.PlayerID{1001}) {
		t.Fatalf("reference winners %v, want [1001]", got)
	}
	_, err = w.svc.Claim(t.Context(), loot.Caller{Player: 1002}, loot.ClaimRequest{Session: "S", Intent: loot.Need})
	if !errors.Is(err, loot.ErrClaimsClosed) {
		t.Errorf("reference claim after settling = %v, want ErrClaimsClosed; reproduce: go test ./ref/loot/mysql -run %s", err, t.Name())
	}
	snap, err := w.svc.Audit(t.Context(), "S")
	if err != nil {
		t.Fatal(err)
	}
	cs, err := w.store.Claims(t.Context(), "S")
	if err != nil || len(cs) != len(snap.Claims) {
		t.Errorf("reference claims on record %v (%v), the snapshot ranked %d", cs, err, len(snap.Claims))
	}
}

// TestTwentyConcurrentIdenticalClaimsLeaveOneRow is the document's 6.2
// script (20 concurrent NEED claims by player 1001) as a Go test: one row
// on both, the unique key (session_no, player_id) doing the work.
func TestTwentyConcurrentIdenticalClaimsLeaveOneRow(t *testing.T) {
	const requests = 20
	doc, db := docDB(t)
	if err := doc.CreateSession(t.Context(), "S202401", "ABYSS-3", "SWORD_001", 1, dbNow(t, db).Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	now := dbNow(t, db)
	errs := loottest.Together(requests, func(int) error {
		_, err := doc.SubmitIntent(t.Context(), docsql.NewIntent("S202401", 1001, "NEED", 2, now))
		return err
	})
	var rows int
	if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) AS intent_count FROM loot_intent WHERE session_no = 'S202401'").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(errs...); err != nil || rows != 1 {
		t.Errorf("document: %d identical claims left %d rows (%v), want 1; reproduce: go test ./ref/loot/mysql -run %s", requests, rows, err, t.Name())
	}

	w := newRefWorld(t)
	w.claiming(t, "S202401", 1, 1001, 1002)
	errs = loottest.Together(requests, func(int) error {
		_, err := w.svc.Claim(t.Context(), loot.Caller{Player: 1001}, loot.ClaimRequest{Session: "S202401", Intent: loot.Need})
		return err
	})
	cs, err := w.store.Claims(t.Context(), "S202401")
	if err := errors.Join(append(errs, err)...); err != nil || len(cs) != 1 {
		t.Errorf("reference: %d identical claims left %v (%v), want one row; reproduce: go test ./ref/loot/mysql -run %s", requests, cs, err, t.Name())
	}
}

// TestTenConcurrentSettlesGrantExactlyQuantity is the document's 6.3
// script with a quantity of 2 among 5 claimants: ten settles at once, on
// ten nodes for the reference. Both grant exactly 2: the document's
// lockForSettle is a correct CAS, and the reference's is the same UPDATE
// with a fence.
//
// On MariaDB ten concurrent lockForSettle UPDATEs of one row can deadlock:
// each goes through uk_session_no to the clustered row and rewrites the
// row's idx_status_deadline entry, and InnoDB rolls one back with
// ER_LOCK_DEADLOCK (1213; seen in about one run in ten here). That
// settler matched nothing and wrote nothing, so it is a lost race, as a
// zero-row UPDATE is: the document's settle throws it (its 6.3 curl gets
// a 500) and its grant count, which is what 6.3 checks, stays right. Any
// other error still fails the test, and exactly one settle must win.
func TestTenConcurrentSettlesGrantExactlyQuantity(t *testing.T) {
	const settlers, quantity = 10, 2
	players := []loot.PlayerID{1001, 1002, 1003, 1004, 1005}
	doc, db := docDB(t)
	deadline := dbNow(t, db).Add(-time.Second)
	if err := doc.CreateSession(t.Context(), "S202401", "ABYSS-3", "SWORD_001", quantity, deadline.Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	for i, p := range players {
		if _, err := db.ExecContext(t.Context(), docsql.UpsertIntent.SQL, "S202401", int64(p), "NEED", 10, i, deadline.Add(-time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	var docWon, deadlocked int
	var docMu sync.Mutex
	errs := loottest.Together(settlers, func(int) error {
		settled, _, err := doc.Settle(t.Context(), "S202401", "SWORD_001", quantity)
		var me *mysqldriver.MySQLError
		lost := !settled && errors.As(err, &me) && me.Number == mysql.ErrDeadlock
		docMu.Lock()
		defer docMu.Unlock()
		if settled {
			docWon++
		}
		if lost {
			deadlocked++
			return nil
		}
		return err
	})
	var grants int
	if err := db.QueryRowContext(t.Context(), "SELECT COUNT(*) AS grant_count FROM loot_grant WHERE session_no = 'S202401'").Scan(&grants); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(errs...); err != nil || grants != quantity || docWon != 1 {
		t.Errorf("document: %d concurrent settles: %d won, %d deadlock victims, %d grants (%v); want 1 and %d grants; reproduce: go test ./ref/loot/mysql -run %s", settlers, docWon, deadlocked, grants, err, quantity, t.Name())
	}

	w := newRefWorld(t)
	w.claiming(t, "S202401", quantity, players...)
	for _, p := range players {
		w.claim(t, "S202401", p, loot.Need)
	}
	w.clock.advance(t, time.Minute)
	nodes := make([]*loot.Service, settlers)
	for i := range nodes {
		nodes[i] = w.node(t, open(t, w.dsn))
	}
	var won int
	var mu sync.Mutex
	errs = loottest.Together(settlers, func(i int) error {
		_, err := nodes[i].Settle(t.Context(), "S202401")
		if err == nil {
			mu.Lock()
			won++
			mu.Unlock()
		}
		if errors.Is(err, loot.ErrAlreadySettling) || errors.Is(err, loot.ErrAlreadySettled) {
			return nil
		}
		return err
	})
	gs, err := w.store.Grants(t.Context(), "S202401")
	if err := errors.Join(append(errs, err)...); err != nil || len(gs) != quantity || won != 1 {
		t.Errorf("reference: %d concurrent settles: %d won, %d grants (%v); want 1 and %d; reproduce: go test ./ref/loot/mysql -run %s", settlers, won, len(gs), err, quantity, t.Name())
	}
}

// TestSettlerDyingMidGrantsStrandsTheSession: the document's settler locks
// and ranks, inserts the first of two grants and dies. Settling again
// finds the session SETTLING, lockForSettle matches nothing, and nothing
// ever writes the second grant or closes the session: the document names
// this as its most common incident and gives no code for it. The
// reference records every grant with the close in one transaction, and a
// settler that dies before it is taken over after its lease by Recover.
func TestSettlerDyingMidGrantsStrandsTheSession(t *testing.T) {
	doc, db := docDB(t)
	deadline := dbNow(t, db).Add(-time.Second)
	if err := doc.CreateSession(t.Context(), "S", "ABYSS-3", "SWORD_001", 2, deadline); err != nil {
		t.Fatal(err)
	}
	for _, p := range []int64{1001, 1002} {
		if err := doc.UpsertIntent(t.Context(), docsql.NewIntent("S", p, "NEED", 0, deadline.Add(-time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := doc.LockForSettle(t.Context(), "S"); err != nil || !ok {
		t.Fatalf("lockForSettle: %v, %v", ok, err)
	}
	ranked, err := doc.SelectRanked(t.Context(), "S")
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.InsertGrantIgnore(t.Context(), docsql.GrantNo("S", ranked[0], "SWORD_001"), "S", ranked[0], "SWORD_001"); err != nil {
		t.Fatal(err)
	}
	// The settler dies here. Another settle:
	settled, _, err := doc.Settle(t.Context(), "S", "SWORD_001", 2)
	if err != nil {
		t.Fatal(err)
	}
	var status string
	var grants int
	if err := db.QueryRowContext(t.Context(), "SELECT status, (SELECT COUNT(*) FROM loot_grant WHERE session_no = 'S') FROM loot_session WHERE session_no = 'S'").Scan(&status, &grants); err != nil {
		t.Fatal(err)
	}
	breaks(t, !settled && status == "SETTLING" && grants == 1, "a session stranded in SETTLING with 1 of 2 grants")

	w := newRefWorld(t)
	w.claiming(t, "S", 2, 1001, 1002)
	w.claim(t, "S", 1001, loot.Need)
	w.claim(t, "S", 1002, loot.Need)
	w.clock.advance(t, time.Minute)
	if _, err := w.store.BeginSettle(t.Context(), "S", time.Minute); err != nil { // the settler's CAS; it dies
		t.Fatal(err)
	}
	w.clock.advance(t, time.Minute) // its lease ends
	if r, err := w.svc.Recover(t.Context()); err != nil || r.Settled != 1 {
		t.Fatalf("reference Recover = %+v, %v; want the session settled", r, err)
	}
	gs, err := w.store.Grants(t.Context(), "S")
	if err != nil || len(gs) != 2 || gs[0].Status != loot.GrantSuccess || gs[1].Status != loot.GrantSuccess {
		t.Errorf("reference grants after a takeover: %+v, %v; want 2 delivered; reproduce: go test ./ref/loot/mysql -run %s", gs, err, t.Name())
	}
}

// TestLongCodesOverflowTheDocumentsGrantNo: session numbers and loot codes
// are VARCHAR(64), so sessionNo:playerId:lootCode reaches 150 bytes, and
// the document's grant_no VARCHAR(96) refuses it (MariaDB's strict mode,
// its default): the grant cannot be written at all. The reference's is
// VARCHAR(160).
func TestLongCodesOverflowTheDocumentsGrantNo(t *testing.T) {
	no, code := "S"+strings.Repeat("s", loot.MaxCodeLen-1), "L"+strings.Repeat("l", loot.MaxCodeLen-1)
	doc, db := docDB(t)
	if err := doc.CreateSession(t.Context(), no, "ABYSS-3", code, 1, dbNow(t, db).Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := doc.UpsertIntent(t.Context(), docsql.NewIntent(no, 1001, "NEED", 0, dbNow(t, db).Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	_, _, err := doc.Settle(t.Context(), no, code, 1)
	breaks(t, err != nil && strings.Contains(err.Error(), "1406"), "a 150-byte grant number refused by VARCHAR(96) (error 1406)")

	w := newRefWorld(t)
	w.loot = code
	w.claiming(t, no, 1, 1001)
	w.claim(t, no, 1001, loot.Need)
	w.clock.advance(t, time.Minute)
	if got := w.winners(t, no); !slices.Equal(got, []loot.PlayerID{1001}) {
		t.Errorf("reference winners %v, want [1001]; reproduce: go test ./ref/loot/mysql -run %s", got, t.Name())
	}
}
