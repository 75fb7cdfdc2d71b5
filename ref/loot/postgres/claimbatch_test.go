package postgres_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// claimCall is one Claim of TestBatchedClaimsAnswerAsTheSinglePath, and
// what it answered.
type claimCall struct {
	no      string
	p       loot.PlayerID
	in      loot.Intent
	c       loot.Claim
	created bool
	err     error
}

func (c claimCall) answer() string {
	if c.err != nil {
		return "error: " + c.err.Error()
	}
	return fmt.Sprintf("%s by %d %s at %v, created %v", c.c.Session, c.c.Player, c.c.Intent, c.c.At, c.created)
}

// claimWorld makes on a fresh database (test clock at clockBase) the
// sessions of TestBatchedClaimsAnswerAsTheSinglePath, through a store
// with opts: OPEN (not claiming yet), CL-1..CL-4 (CLAIMING for a minute;
// 101 has claimed NEED in CL-1, 102 GREED in CL-2), LATE (CLAIMING, its
// deadline passed), SET (SETTLING), CAN (CANCELED); no NONE. It returns
// the store, closed with t, and the counter of its batched claim
// statements.
func claimWorld(t *testing.T, opts postgres.Options) (*postgres.Store, *statements) {
	t.Helper()
	url, pool := clockedDB(t, clockBase)
	batched := &statements{marker: "unnest($1::text[], $2::bigint[], $3::text[])"}
	opts.TestClock, opts.Config = testClock, func(c *pgxpool.Config) { c.ConnConfig.Tracer = batched }
	st := openStore(t, url, opts)
	t.Cleanup(func() { st.Close() })
	w := &world{t: t, url: url, pool: pool, st: st, clock: true}
	ctx := t.Context()
	open := func(no string, window time.Duration, claiming bool) {
		spec := loot.Spec{No: no, Dungeon: "ABYSS-3", Loot: "L", Quantity: 2, Deadline: w.now().Add(window),
			Rule: loot.RuleSeeded, Members: team(5)}
		if _, _, err := st.Open(ctx, spec); err != nil {
			t.Fatal(err)
		}
		if claiming {
			if _, err := st.StartClaiming(ctx, no); err != nil {
				t.Fatal(err)
			}
		}
	}
	open("OPEN", time.Hour, false)
	for i := 1; i <= 4; i++ {
		open(fmt.Sprintf("CL-%d", i), time.Hour, true)
	}
	open("LATE", time.Second, true)
	open("SET", time.Second, true)
	open("CAN", time.Hour, true)
	for _, c := range []claimCall{{no: "CL-1", p: 101, in: loot.Need}, {no: "CL-2", p: 102, in: loot.Greed}} {
		if _, _, err := st.Claim(ctx, c.no, c.p, c.in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Cancel(ctx, "CAN"); err != nil {
		t.Fatal(err)
	}
	w.advance(2 * time.Second)
	if _, err := st.BeginSettle(ctx, "SET", time.Minute); err != nil {
		t.Fatal(err)
	}
	batched.n.Store(0)
	return st, batched
}

// TestBatchedClaimsAnswerAsTheSinglePath: a mix of claims (written,
// updated, identical repeats, refused by every guard, of no session, two
// of one session and player in one batch), all at once through a Store
// with Options.Batch, answer what the same claims one by one through an
// unbatched Store on a twin database answer, word for word, and leave the
// same claims behind; the calls did share statements.
func TestBatchedClaimsAnswerAsTheSinglePath(t *testing.T) {
	const run = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestBatchedClaimsAnswerAsTheSinglePath ./ref/loot/postgres/"
	var calls []claimCall
	for _, no := range []string{"OPEN", "CL-1", "CL-2", "CL-3", "LATE", "SET", "CAN", "NONE"} {
		for _, p := range []loot.PlayerID{101, 102, 103, 999} { // 999: not a member
			calls = append(calls, claimCall{no: no, p: p, in: loot.Need})
		}
	}
	// Twins: an identical claim twice (one writes, the other repeats it).
	twins := []claimCall{{no: "CL-3", p: 104, in: loot.Greed}, {no: "CL-2", p: 105, in: loot.Pass}}
	for _, c := range twins {
		calls = append(calls, c, c)
	}
	// One player's two intents: both taken, one after the other.
	split := []claimCall{{no: "CL-4", p: 105, in: loot.Need}, {no: "CL-4", p: 105, in: loot.Greed}}

	single, _ := claimWorld(t, postgres.Options{})
	want := slices.Clone(calls)
	for i := range want {
		want[i].c, want[i].created, want[i].err = single.Claim(t.Context(), want[i].no, want[i].p, want[i].in)
	}

	batchedStore, batched := claimWorld(t, postgres.Options{Batch: true})
	all := append(slices.Clone(calls), split...)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			all[i].c, all[i].created, all[i].err = batchedStore.Claim(t.Context(), all[i].no, all[i].p, all[i].in)
		}()
	}
	close(start)
	wg.Wait()
	got := all[:len(calls)]

	// The twins' answers in either order: the one that wrote may be
	// either call.
	twinOf := func(i int) int {
		if i >= len(calls)-2*len(twins) {
			return i ^ 1 // twins sit at even/odd pairs after the grid (its length is even)
		}
		return -1
	}
	for i := range got {
		if got[i].answer() == want[i].answer() {
			continue
		}
		if j := twinOf(i); j >= 0 && got[i].answer() == want[j].answer() {
			continue
		}
		t.Errorf("batched claim %s by %d %s answered\n\t%s\nthe single path answered\n\t%s\nto reproduce: %s",
			got[i].no, got[i].p, got[i].in, got[i].answer(), want[i].answer(), run)
	}
	if n := batched.n.Load(); n == 0 || n >= int64(len(all)) {
		t.Errorf("%d batched claim statements for %d concurrent claims: want batches (1 or more, fewer than the claims); to reproduce: %s", n, len(all), run)
	}

	a, b := all[len(calls)], all[len(calls)+1]
	if a.err != nil || b.err != nil || a.created == b.created {
		t.Fatalf("one player's two intents at once: %s; %s; want both taken, one of them created; to reproduce: %s", a.answer(), b.answer(), run)
	}
	later := a
	if a.created {
		later = b
	}
	cs, err := batchedStore.Claims(t.Context(), "CL-4")
	if err != nil || len(cs) != 1 || cs[0].Intent != later.in {
		t.Errorf("CL-4 holds %v (%v) after NEED and GREED by 105; want the later one's %s alone; to reproduce: %s", cs, err, later.in, run)
	}
	for _, no := range []string{"CL-1", "CL-2", "CL-3"} {
		g, gerr := batchedStore.Claims(t.Context(), no)
		w, werr := single.Claims(t.Context(), no)
		if fmt.Sprint(g, gerr) != fmt.Sprint(w, werr) {
			t.Errorf("%s holds %v (%v) batched, %v (%v) single; to reproduce: %s", no, g, gerr, w, werr, run)
		}
	}
}
