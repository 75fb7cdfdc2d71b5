package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// world is one database and one Redis key prefix shared by the parent and
// its children, with the parent's own store and pool for setting up and
// reading back.
type world struct {
	t      *testing.T
	url    string
	pool   *pgxpool.Pool
	st     *postgres.Store
	redis  string
	prefix string
	clock  bool // the store reads the test clock, which the parent moves
}

func newWorld(t *testing.T, clock bool) *world {
	t.Helper()
	w := &world{t: t, clock: clock, redis: testserver.Redis(t).URL(), prefix: testserver.RedisPrefix(t)}
	opts := postgres.Options{}
	if clock {
		w.url, w.pool = clockedDB(t, clockBase)
		opts.TestClock = testClock
	} else {
		w.url = testserver.Postgres(t)
		var err error
		if w.pool, err = pgxpool.New(context.Background(), w.url); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.pool.Close)
	}
	if _, err := w.pool.Exec(t.Context(), effectsTable); err != nil {
		t.Fatal(err)
	}
	w.st = openStore(t, w.url, opts)
	t.Cleanup(func() { w.st.Close() })
	return w
}

// cfg is a child configuration on w.
func (w *world) cfg(role string, sessions ...string) childConfig {
	return childConfig{Role: role, PG: w.url, Redis: w.redis, Prefix: w.prefix, Clock: w.clock, Sessions: sessions}.withDefaults()
}

// now reads the store's clock.
func (w *world) now() time.Time {
	w.t.Helper()
	q := `SELECT now()`
	if w.clock {
		q = `SELECT now FROM ` + testClock
	}
	var now time.Time
	if err := w.pool.QueryRow(w.t.Context(), q).Scan(&now); err != nil {
		w.t.Fatal(err)
	}
	return now
}

// advance moves the test clock.
func (w *world) advance(d time.Duration) {
	w.t.Helper()
	if !w.clock {
		w.t.Fatal("world.advance on the database's real clock")
	}
	if _, err := w.pool.Exec(w.t.Context(), `UPDATE `+testClock+` SET now = now + $1::interval`, d); err != nil {
		w.t.Fatal(err)
	}
}

// team returns players 101..100+n.
func team(n int) []loot.PlayerID {
	ps := make([]loot.PlayerID, n)
	for i := range ps {
		ps[i] = loot.PlayerID(101 + i)
	}
	return ps
}

// claiming opens session no (loot code "L-"+no, for hookFairness) with
// quantity items for members and has every member claim NEED in order (1ms
// apart on the test clock, so the first quantity members win); the
// deadline is window from then.
func (w *world) claiming(no string, quantity int, members []loot.PlayerID, window time.Duration) {
	w.t.Helper()
	ctx := w.t.Context()
	open := window
	if !w.clock {
		// On the real clock a stall of the shared test machine could
		// outlast a short window before the claims land: claim under a
		// distant deadline, then bring it in (dueIn).
		open = max(window, time.Hour)
	}
	spec := loot.Spec{No: no, Dungeon: "ABYSS-3", Loot: "L-" + no, Quantity: quantity, Deadline: w.now().Add(open),
		Rule: loot.RuleSeeded, Members: members}
	if _, _, err := w.st.Open(ctx, spec); err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.st.StartClaiming(ctx, no); err != nil {
		w.t.Fatal(err)
	}
	for _, p := range members {
		if _, _, err := w.st.Claim(ctx, no, p, loot.Need); err != nil {
			w.t.Fatal(err)
		}
		if w.clock {
			w.advance(time.Millisecond)
		}
	}
	if open != window {
		w.dueIn(no, window)
	}
}

// dueIn moves CLAIMING session no's deadline to d after the database's now:
// a fixture for tests on the real clock, as if the session had been opened
// with that deadline.
func (w *world) dueIn(no string, d time.Duration) {
	w.t.Helper()
	tag, err := w.pool.Exec(w.t.Context(), `UPDATE loot_session SET deadline_at = now() + $2::interval
		WHERE session_no = $1 AND status = 'CLAIMING'`, no, d)
	if err != nil || tag.RowsAffected() != 1 {
		w.t.Fatalf("moving the deadline of %s: %v, %d rows", no, err, tag.RowsAffected())
	}
}

// state is what the database holds of one session.
type state struct {
	status  loot.Status
	fence   loot.Fence
	grants  []loot.Grant
	ledger  int // loot_inventory rows of the session
	effects map[string]int
}

func (w *world) state(no string) state {
	w.t.Helper()
	ctx := w.t.Context()
	sess, err := w.st.Session(ctx, no)
	if err != nil {
		w.t.Fatal(err)
	}
	gs, err := w.st.Grants(ctx, no)
	if err != nil {
		w.t.Fatal(err)
	}
	s := state{status: sess.Status, fence: sess.Fence, grants: gs, effects: map[string]int{}}
	if err := w.pool.QueryRow(ctx, `SELECT count(*) FROM loot_inventory i JOIN loot_grant g USING (grant_no)
		WHERE g.session_no = $1`, no).Scan(&s.ledger); err != nil {
		w.t.Fatal(err)
	}
	rows, err := w.pool.Query(ctx, `SELECT grant_no, count(*) FROM test_effects WHERE grant_no LIKE $1 || ':%' GROUP BY grant_no`, no)
	if err != nil {
		w.t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			g string
			n int
		)
		if err := rows.Scan(&g, &n); err != nil {
			w.t.Fatal(err)
		}
		s.effects[g] = n
	}
	if err := rows.Err(); err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (s state) String() string {
	var gs []string
	for _, g := range s.grants {
		gs = append(gs, fmt.Sprintf("%s %s applied %d", g.No, g.Status, s.effects[g.No]))
	}
	return fmt.Sprintf("%s fence %d, ledger %d, grants [%s]", s.status, s.fence, s.ledger, strings.Join(gs, "; "))
}

// delivered counts the SUCCESS grants.
func (s state) delivered() int {
	n := 0
	for _, g := range s.grants {
		if g.Status == loot.GrantSuccess {
			n++
		}
	}
	return n
}

// checkExactlyOnce: session no is CLOSED with quantity grants, every one
// SUCCESS with its item applied exactly once (effects) and one ledger row,
// nothing applied for anyone else, and its audit replays.
func (w *world) checkExactlyOnce(no string, quantity int) state {
	w.t.Helper()
	s := w.state(no)
	ok := s.status == loot.StatusClosed && len(s.grants) == quantity && s.ledger == quantity && len(s.effects) == quantity
	for _, g := range s.grants {
		ok = ok && g.Status == loot.GrantSuccess && s.effects[g.No] == 1
	}
	if !ok {
		w.t.Fatalf("session %s: %v; want CLOSED with %d grants, each SUCCESS and applied exactly once", no, s, quantity)
	}
	svc, err := loot.New(loot.Config{Store: w.st, Inventory: w.st.Inventory(countEffect), Fairness: memory.NewHistory()})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := svc.Audit(w.t.Context(), no); err != nil {
		w.t.Fatalf("session %s: audit: %v", no, err)
	}
	return s
}

// applied counts the grants of s whose items were applied on delivery
// path inv (proc_test.go): the Effect's applications, or with invLedger,
// which has no Effect, the ledger rows.
func (s state) applied(inv string) int {
	if inv == invLedger {
		return s.ledger
	}
	return len(s.effects)
}

// checkDeliveredOnce is checkExactlyOnce on delivery path inv: with
// invLedger the ledger row is the item (its key, the grant number, holds
// it to one), so every grant SUCCESS with one ledger row and no Effect
// applied.
func (w *world) checkDeliveredOnce(no string, quantity int, inv string) {
	w.t.Helper()
	if inv != invLedger {
		w.checkExactlyOnce(no, quantity)
		return
	}
	s := w.state(no)
	ok := s.status == loot.StatusClosed && len(s.grants) == quantity && s.ledger == quantity && len(s.effects) == 0
	for _, g := range s.grants {
		ok = ok && g.Status == loot.GrantSuccess
	}
	if !ok {
		w.t.Fatalf("session %s: %v; want CLOSED with %d grants, each SUCCESS with one ledger row; reproduce: go test -count=1 -run '%s' ./ref/loot/postgres",
			no, s, quantity, w.t.Name())
	}
}

// checkNoneSettling: no session is left SETTLING.
func (w *world) checkNoneSettling() {
	w.t.Helper()
	var n int
	if err := w.pool.QueryRow(w.t.Context(), `SELECT count(*) FROM loot_session WHERE status = 'SETTLING'`).Scan(&n); err != nil {
		w.t.Fatal(err)
	}
	if n != 0 {
		w.t.Fatalf("%d sessions left SETTLING", n)
	}
}
