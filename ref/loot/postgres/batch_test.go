package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// statements counts the statements a pool ran whose text contains a
// marker, to see batches form.
type statements struct {
	marker string
	n      atomic.Int64
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, s.marker) {
		s.n.Add(1)
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (s *statements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	for _, q := range d.Batch.QueuedQueries {
		if strings.Contains(q.SQL, s.marker) {
			s.n.Add(1)
		}
	}
	return ctx
}

func (s *statements) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (s *statements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}

// TestBatchAnswersEachCall: through one batched Store, 40 settlers race
// two by two for 20 sessions, then 20 settlers record at once, two of
// them with a malformed decision (a grant number twice). Calls do share
// statements (fewer CAS statements than calls), and each caller still
// gets its own answer: one winner per session, ErrAlreadySettling for the
// other, ErrBadArgument for the malformed decisions alone (their sessions
// stay SETTLING, without a grant), CLOSED with its grants for the rest.
func TestBatchAnswersEachCall(t *testing.T) {
	const sessions = 20
	url, pool := clockedDB(t, clockBase)
	if _, err := pool.Exec(t.Context(), effectsTable); err != nil {
		t.Fatal(err)
	}
	cas := &statements{marker: "unnest($1::text[], $2::interval[])"}
	st := openStore(t, url, postgres.Options{TestClock: testClock, Batch: true, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = cas }})
	defer st.Close()
	w := &world{t: t, url: url, pool: pool, st: st, clock: true}
	var nos []string
	for i := range sessions {
		no := fmt.Sprintf("B-%d", i)
		w.claiming(no, 2, team(3), time.Minute)
		nos = append(nos, no)
	}
	w.advance(time.Minute)
	ctx := t.Context()
	type began struct {
		fz  loot.Frozen
		err error
	}
	bs := make([]began, 2*sessions)
	var wg sync.WaitGroup
	for i := range bs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bs[i].fz, bs[i].err = st.BeginSettle(ctx, nos[i/2], time.Minute)
		}()
	}
	wg.Wait()
	if n := cas.n.Load(); n >= int64(len(bs)) {
		t.Errorf("%d CAS statements for %d concurrent BeginSettles: no batch formed", n, len(bs))
	}
	fzs := make([]loot.Frozen, sessions)
	for i := range sessions {
		a, b := bs[2*i], bs[2*i+1]
		if (a.err == nil) == (b.err == nil) {
			t.Fatalf("%s: BeginSettles answered %v and %v; want one winner", nos[i], a.err, b.err)
		}
		win, lose := a, b
		if a.err != nil {
			win, lose = b, a
		}
		if !errors.Is(lose.err, loot.ErrAlreadySettling) || win.fz.Session.Fence != 1 || len(win.fz.Claims) != 3 {
			t.Fatalf("%s: winner %+v, loser %v; want fence 1 with 3 frozen claims, and ErrAlreadySettling", nos[i], win.fz, lose.err)
		}
		fzs[i] = win.fz
	}
	bad := map[int]bool{3: true, 11: true}
	errs := make([]error, sessions)
	for i := range sessions {
		d := decide(t, fzs[i])
		if bad[i] {
			d.Grants = slices.Clone(d.Grants)
			d.Grants[1] = d.Grants[0]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = st.RecordGrants(ctx, d)
		}()
	}
	wg.Wait()
	for i, no := range nos {
		s := w.state(no)
		switch {
		case bad[i]:
			if !errors.Is(errs[i], loot.ErrBadArgument) || s.status != loot.StatusSettling || len(s.grants) != 0 {
				t.Errorf("%s, malformed: %v, %v; want ErrBadArgument, SETTLING without grants", no, errs[i], s)
			}
		case errs[i] != nil || s.status != loot.StatusClosed || len(s.grants) != 2:
			t.Errorf("%s: %v, %v; want CLOSED with 2 grants", no, errs[i], s)
		}
	}
}

// decide is the settler's decision for fz, everyone new.
func decide(t *testing.T, fz loot.Frozen) loot.Decision {
	t.Helper()
	fair := map[loot.PlayerID]loot.Fairness{}
	for _, c := range fz.Claims {
		fair[c.Player] = loot.Fairness{}
	}
	d, err := loot.Decide(fz, fair, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestBatchedDeliveriesShareAStatement: through one Store opened with
// Options.Batch, 20 DeliverBatch calls at once, each of its own session's
// grants, share statements (fewer than calls) and all deliver: every
// grant SUCCESS with one ledger row. Then 20 more at once, each
// delivering again what it delivered (nothing left to apply), every
// fourth with a grant never recorded too: only those calls fail, with
// loot.ErrNotFound (five of them, so some share a batch with the others,
// whatever the order they arrive in), and every grant stays delivered
// once.
func TestBatchedDeliveriesShareAStatement(t *testing.T) {
	const reproduce = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run 'TestBatchedDeliveriesShareAStatement' ./ref/loot/postgres/"
	const calls = 20
	defer func() {
		if t.Failed() {
			t.Log("to reproduce: " + reproduce)
		}
	}()
	url, pool := clockedDB(t, clockBase)
	delivers := &statements{marker: "FROM g, n WHERE n.n = $2"}
	st := openStore(t, url, postgres.Options{TestClock: testClock, Batch: true, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = delivers }})
	defer st.Close()
	gs := make([][]loot.Grant, calls)
	for i := range calls {
		gs[i] = recorded(t, st, pool, fmt.Sprintf("D-%d", i), 2, 1, 2, 3)
	}
	inv := st.Inventory(nil)
	before := delivers.n.Load()
	for i, err := range loottest.Together(calls, func(i int) error { return inv.DeliverBatch(context.Background(), gs[i]) }) {
		if err != nil {
			t.Errorf("DeliverBatch of D-%d: %v", i, err)
		}
	}
	switch n := delivers.n.Load() - before; {
	case n == 0:
		t.Errorf("no statement with %q for %d DeliverBatch calls: the count is of another statement than deliverBatch", delivers.marker, calls)
	case n >= calls:
		t.Errorf("%d delivery statements for %d concurrent DeliverBatch calls: no batch formed", n, calls)
	}
	errs := loottest.Together(calls, func(i int) error {
		if i%4 == 0 {
			unknown := gs[i][0]
			unknown.No = loot.GrantNo(unknown.Session, 9, unknown.Loot)
			return inv.DeliverBatch(context.Background(), append(slices.Clone(gs[i]), unknown))
		}
		return inv.DeliverBatch(context.Background(), gs[i])
	})
	for i, err := range errs {
		if want := i%4 == 0; want != errors.Is(err, loot.ErrNotFound) || !want && err != nil {
			t.Errorf("repeated DeliverBatch of D-%d (with a grant never recorded: %v) = %v", i, want, err)
		}
	}
	for i := range calls {
		recs, err := st.Grants(t.Context(), fmt.Sprintf("D-%d", i))
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range recs {
			if n := ledgerRows(t, pool, g.No); n != 1 || g.Status != loot.GrantSuccess {
				t.Errorf("grant %s: %d ledger rows, %s; want 1, SUCCESS", g.No, n, g.Status)
			}
		}
	}
}
