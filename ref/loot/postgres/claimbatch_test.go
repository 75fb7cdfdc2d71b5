package postgres_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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

// TestBatchedClaimsRacingTheSettleAreFrozenOrRefused: claims through a
// batched Store race the clock passing their sessions' deadline and the
// (batched) settles that follow it; every claim the Store took is among
// the claims its session's settle froze, and no claim row lands after the
// freeze (the claims read afterwards are the frozen ones). A race test: it
// can miss a broken lock order by luck (no false positives, may have
// false negatives), so it runs several rounds.
func TestBatchedClaimsRacingTheSettleAreFrozenOrRefused(t *testing.T) {
	const (
		run      = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestBatchedClaimsRacingTheSettleAreFrozenOrRefused ./ref/loot/postgres/"
		rounds   = 4
		sessions = 12
		players  = 5
	)
	url, pool := clockedDB(t, clockBase)
	st := openStore(t, url, postgres.Options{TestClock: testClock, Batch: true})
	defer st.Close()
	w := &world{t: t, url: url, pool: pool, st: st, clock: true}
	ctx := t.Context()
	var taken, refused int
	for round := range rounds {
		nos := make([]string, sessions)
		for i := range nos {
			nos[i] = fmt.Sprintf("R%d-%d", round, i)
			spec := loot.Spec{No: nos[i], Dungeon: "ABYSS-3", Loot: "L", Quantity: 2, Deadline: w.now().Add(time.Second),
				Rule: loot.RuleSeeded, Members: team(players)}
			if _, _, err := st.Open(ctx, spec); err != nil {
				t.Fatal(err)
			}
			if _, err := st.StartClaiming(ctx, nos[i]); err != nil {
				t.Fatal(err)
			}
		}
		took := make([][]error, sessions)
		frozen := make([]loot.Frozen, sessions)
		settleErr := make([]error, sessions)
		var (
			wg       sync.WaitGroup
			answered atomic.Int64
		)
		start := make(chan struct{})
		for i := range nos {
			took[i] = make([]error, players)
			for k := range players {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// Spread over the clock's move: a stagger of 0-20ms
					// by position.
					time.Sleep(time.Duration((i*players+k)*397%20000) * time.Microsecond)
					_, _, took[i][k] = st.Claim(ctx, nos[i], team(players)[k], loot.Need)
					answered.Add(1)
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for { // until the deadline has passed for the store
					frozen[i], settleErr[i] = st.BeginSettle(ctx, nos[i], time.Minute)
					if !errors.Is(settleErr[i], loot.ErrNotDue) {
						return
					}
				}
			}()
		}
		close(start)
		// The deadline passes once a third of the claims are answered:
		// some are taken for sure, and the rest are in flight or still
		// to start as the settles' CASes begin.
		for answered.Load() < sessions*players/3 {
			time.Sleep(50 * time.Microsecond)
		}
		w.advance(time.Second)
		wg.Wait()
		for i, no := range nos {
			if settleErr[i] != nil {
				t.Fatalf("round %d: BeginSettle(%s) = %v; to reproduce: %s", round, no, settleErr[i], run)
			}
			in := map[loot.PlayerID]bool{}
			for _, c := range frozen[i].Claims {
				in[c.Player] = true
			}
			for k, err := range took[i] {
				p := team(players)[k]
				if err == nil {
					taken++
				} else {
					refused++
				}
				switch {
				case err == nil && !in[p]:
					t.Errorf("round %d: %s took %d's claim, which its settle did not freeze (froze %v); to reproduce: %s", round, no, p, frozen[i].Claims, run)
				case err != nil && !errors.Is(err, loot.ErrClaimsClosed):
					t.Errorf("round %d: claim of %s by %d = %v, want taken or ErrClaimsClosed; to reproduce: %s", round, no, p, err, run)
				}
			}
			after, err := st.Claims(ctx, no)
			if err != nil || fmt.Sprint(after) != fmt.Sprint(frozen[i].Claims) {
				t.Errorf("round %d: %s holds claims %v (%v) after its settle froze %v: a claim landed after the freeze; to reproduce: %s",
					round, no, after, err, frozen[i].Claims, run)
			}
		}
	}
	// Both sides of the race happened, or the test proved nothing.
	if taken == 0 || refused == 0 {
		t.Errorf("%d claims taken and %d refused over %d rounds: the claims did not race the deadline; to reproduce: %s", taken, refused, rounds, run)
	}
	t.Logf("%d claims taken, %d refused", taken, refused)
}

// TestBatchedClaimWaitingOnTheCASIsRefused: a batch of claims that meets
// a session under an uncommitted CAS must not write that session's claims:
// it skips the row, finds it still CLAIMING before its deadline (this CAS
// is the test's own UPDATE to SETTLING, which does not ask for the
// deadline), and runs those claims alone, each waiting for the CAS and
// re-reading the row after it: SETTLING, refused; the batch's other
// session takes its claim. Deterministic: the test holds the CAS until
// both lone claims wait on it. Without the batch's FOR SHARE, the claims
// of X would be written under the CAS's nose and this fails.
func TestBatchedClaimWaitingOnTheCASIsRefused(t *testing.T) {
	const run = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestBatchedClaimWaitingOnTheCASIsRefused ./ref/loot/postgres/"
	url, pool := clockedDB(t, clockBase)
	batched := &statements{marker: "unnest($1::text[], $2::bigint[], $3::text[])"}
	st := openStore(t, url, postgres.Options{TestClock: testClock, Batch: true, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = batched }})
	defer st.Close()
	ctx := t.Context()
	for _, no := range []string{"X", "Y", "Z"} {
		spec := loot.Spec{No: no, Dungeon: "ABYSS-3", Loot: "L", Quantity: 1, Deadline: clockBase.Add(time.Hour),
			Rule: loot.RuleSeeded, Members: team(3)}
		if _, _, err := st.Open(ctx, spec); err != nil {
			t.Fatal(err)
		}
		if _, err := st.StartClaiming(ctx, no); err != nil {
			t.Fatal(err)
		}
	}
	// waiting waits until n statements containing marker wait for a lock.
	waiting := func(marker string, n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			var got int
			if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0`, marker).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("no statement with %q waits for a lock after 10s (a claim must wait for the CAS: is a FOR SHARE gone?); to reproduce: %s", marker, run)
			}
		}
	}
	begin := func(sql string) pgx.Tx {
		t.Helper()
		tx, err := pool.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
		return tx
	}
	// Z's lock keeps both of Z's claims waiting: the first alone (no other
	// claim in flight: the unbatched statement), the second on the
	// batcher's one worker (a batch of one), so the claims on X and Y
	// queue behind it and then make one batch.
	holdZ := begin(`SELECT 1 FROM loot_session WHERE session_no = 'Z' FOR UPDATE`)
	defer holdZ.Rollback(ctx)
	type answer struct {
		c   loot.Claim
		err error
	}
	calls := []struct {
		no string
		p  loot.PlayerID
	}{{"Z", 101}, {"Z", 102}, {"X", 101}, {"X", 102}, {"Y", 101}}
	answers := make([]answer, len(calls))
	var wg sync.WaitGroup
	claim := func(i int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i].c, _, answers[i].err = st.Claim(ctx, calls[i].no, calls[i].p, loot.Need)
		}()
	}
	claim(0)
	waiting("loot_claim", 1)
	claim(1)
	waiting("loot_claim", 2)
	cas := begin(`UPDATE loot_session SET status = 'SETTLING', fence = fence + 1, settle_until = (SELECT now FROM ` + testClock + `) + interval '1 minute'
		WHERE session_no = 'X'`)
	defer cas.Rollback(ctx)
	for i := 2; i < len(calls); i++ {
		claim(i)
	}
	time.Sleep(50 * time.Millisecond) // the three claims queue behind Z's
	if err := holdZ.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	waiting("FOR SHARE OF s", 2) // X's two claims, alone after the batch skipped X
	if n := batched.n.Load(); n != 1 {
		t.Errorf("%d batched claim statements, want the one of X and Y; to reproduce: %s", n, run)
	}
	if err := cas.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, a := range answers {
		wantClosed := calls[i].no == "X"
		if wantClosed != errors.Is(a.err, loot.ErrClaimsClosed) || (!wantClosed && a.err != nil) {
			t.Errorf("claim of %s by %d = %+v, %v; want ErrClaimsClosed for X (the CAS froze it while the claim waited), taken otherwise; to reproduce: %s",
				calls[i].no, calls[i].p, a.c, a.err, run)
		}
	}
	if cs, err := st.Claims(ctx, "X"); err != nil || len(cs) != 0 {
		t.Errorf("X holds claims %v (%v) after its CAS froze none; to reproduce: %s", cs, err, run)
	}
}
