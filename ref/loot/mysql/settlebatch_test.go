package mysql_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestStoreConformanceBatch runs the loot Store suite on stores opened
// with Options.Batch, under both isolation levels and as the application's
// role (the batch routines need no privilege the single ones do not): the
// suite's concurrent settlers then share batched CALLs.
func TestStoreConformanceBatch(t *testing.T) {
	for _, iso := range isolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			loottest.Run(t, harnessOf(mysql.Options{Batch: true}, iso.params, nil))
		})
	}
	t.Run("least-privilege", func(t *testing.T) {
		loottest.Run(t, harnessOf(mysql.Options{Batch: true}, "", func(t *testing.T, dsn string) string {
			return appRole(t, dsn, appPrivileges)
		}))
	})
}

// settleWorld is one database of TestSettleBatchAnswersAsAlone: a store
// reading its own test clock, its packets sent counted, and the frozen
// sessions and decisions its setup made.
type settleWorld struct {
	dsn    string
	s      *mysql.Store
	clock  *testClock
	sent   *writes
	frozen map[string]loot.Frozen // the setup's won BeginSettles
}

// newSettleWorld makes a new database in the state every batch below
// starts from (the clock at base + 2m):
//
//	due, twice, empty, dupA, dupB  CLAIMING, deadline base + 1m (empty has no claims)
//	notdue                         CLAIMING, deadline base + 10m
//	open                           OPEN
//	held                           SETTLING at fence 1, lease until base + 11m
//	expired                        SETTLING at fence 1, lease until base + 1m30s
//	closed                         CLOSED by its decision at fence 1
//	canceled                       CANCELED while SETTLING at fence 1
//
// (missing never exists), each with members 1, 2, 3 claiming NEED but
// empty's.
func newSettleWorld(t *testing.T, params string) *settleWorld {
	t.Helper()
	dsn := testserver.MariaDB(t)
	w := &settleWorld{dsn: dsn, clock: newTestClock(t, dsn), sent: &writes{}, frozen: map[string]loot.Frozen{}}
	w.s = openOpts(t, dsn+params, mysql.Options{Config: w.sent.count})
	ctx := t.Context()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup: %s: %v", what, err)
		}
	}
	for _, no := range []string{"due", "twice", "empty", "dupA", "dupB", "notdue", "open", "held", "expired", "closed", "canceled"} {
		deadline := time.Minute
		if no == "notdue" {
			deadline = 10 * time.Minute
		}
		_, _, err := w.s.Open(ctx, loot.Spec{No: no, Dungeon: "D", Loot: "L", Quantity: 2, Deadline: w.clock.now(t).Add(deadline),
			Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2, 3}})
		must("open "+no, err)
		if no == "open" {
			continue
		}
		_, err = w.s.StartClaiming(ctx, no)
		must("start claiming "+no, err)
		for p := loot.PlayerID(1); p <= 3 && no != "empty"; p++ {
			_, _, err := w.s.Claim(ctx, no, p, loot.Need)
			must("claim "+no, err)
		}
	}
	w.clock.advance(t, time.Minute)
	for no, lease := range map[string]time.Duration{"held": 10 * time.Minute, "expired": 30 * time.Second, "closed": time.Minute, "canceled": time.Minute} {
		fz, err := w.s.BeginSettle(ctx, no, lease)
		must("begin settle "+no, err)
		w.frozen[no] = fz
	}
	_, err := w.s.RecordGrants(ctx, decide(t, w.frozen["closed"]))
	must("record closed", err)
	_, err = w.s.Cancel(ctx, "canceled")
	must("cancel", err)
	w.clock.advance(t, time.Minute)
	return w
}

// decide is the settler's decision for fz, everyone new (decideNew).
func decide(t *testing.T, fz loot.Frozen) loot.Decision {
	t.Helper()
	d, err := decideNew(fz)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// decideNew is loot.Decide for fz with every claimant's fairness zero
// (everyone new), and a minute's lease.
func decideNew(fz loot.Frozen) (loot.Decision, error) {
	fair := map[loot.PlayerID]loot.Fairness{}
	for _, c := range fz.Claims {
		fair[c.Player] = loot.Fairness{}
	}
	return loot.Decide(fz, fair, time.Minute)
}

// errText is err's message, "" for nil: two paths answer alike when their
// messages are equal, the sentinel they wrap included.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSettleBatchAnswersAsAlone: one batch of BeginSettles over sessions
// due, not due, OPEN, SETTLING with a live lease, SETTLING with an expired
// lease (taken over: fence 2), CLOSED, CANCELED, missing, without claims
// and the same session twice costs two packets sent (the batch, and the
// repeat alone after it), and answers each call, frozen claims and errors
// to the letter, as BeginSettle answers the same calls one by one on a
// database in the same state. So do the two batches of RecordGrants after
// it: the new fences' decisions, a stale fence's (fence 0 of the held
// session), the expired lease's first settler's (also stale, and answered
// alone after the new settler's, its session's first in the batch), the
// repeat of a recorded decision, a canceled session's and one decision
// twice (three packets: the batch and the two calls answered after it);
// and one whose two decisions name one grant number (the batch fails on
// uk_grant_no and runs again call by call: three packets, and only the
// second caller gets loot.ErrBadArgument). What each leaves recorded is
// the same too. Under both isolation levels.
func TestSettleBatchAnswersAsAlone(t *testing.T) {
	const reproduce = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run 'TestSettleBatchAnswersAsAlone' ./ref/loot/mysql/"
	for _, iso := range isolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			defer func() {
				if t.Failed() {
					t.Log("to reproduce: " + reproduce)
				}
			}()
			ctx := t.Context()
			batched, alone := newSettleWorld(t, iso.params), newSettleWorld(t, iso.params)
			nos := []string{"twice", "due", "notdue", "open", "held", "expired", "closed", "canceled", "missing", "twice", "empty", "dupA", "dupB"}
			before := batched.sent.n.Load()
			got, gotErrs := batched.s.BeginSettleBatch(ctx, nos, time.Minute)
			if n := batched.sent.n.Load() - before; n != 2 {
				t.Errorf("a batch of %d BeginSettles, one session twice, cost %d packets sent, want 2", len(nos), n)
			}
			fzs := map[string]loot.Frozen{}
			for i, no := range nos {
				want, err := alone.s.BeginSettle(ctx, no, time.Minute)
				if diff := cmp.Diff(want, got[i]); diff != "" || errText(err) != errText(gotErrs[i]) {
					t.Errorf("BeginSettle(%s) #%d batched = %v; alone = %v; frozen (-alone +batched):\n%s", no, i, gotErrs[i], err, diff)
				}
				if err == nil {
					fzs[no] = want
				}
			}
			// Not vacuous: the answers the calls must get, whichever path.
			for no, want := range map[string]error{"notdue": loot.ErrNotDue, "held": loot.ErrAlreadySettling, "missing": loot.ErrNotFound} {
				if i := slices.Index(nos, no); !errors.Is(gotErrs[i], want) {
					t.Errorf("batched BeginSettle(%s) = %v, want %v", no, gotErrs[i], want)
				}
			}
			if i := slices.Index(nos, "twice"); gotErrs[i] != nil || !errors.Is(gotErrs[slices.Index(nos[i+1:], "twice")+i+1], loot.ErrAlreadySettling) {
				t.Errorf("batched BeginSettle(twice) twice = %v, %v; want a winner, then ErrAlreadySettling", gotErrs[i], gotErrs[i+9])
			}
			if fz := fzs["expired"]; fz.Session.Fence != 2 || len(fz.Claims) != 3 {
				t.Errorf("batched BeginSettle(expired) = fence %d, %d claims; want taken over at fence 2 with 3 claims", fz.Session.Fence, len(fz.Claims))
			}
			if fz, ok := fzs["empty"]; !ok || fz.Claims == nil || len(fz.Claims) != 0 {
				t.Errorf("batched BeginSettle(empty) = %+v; want won with no claims", fz)
			}

			heldStale := decide(t, batched.frozen["held"])
			heldStale.Fence = 0
			dupB := decide(t, fzs["dupB"])
			dupB.Grants = slices.Clone(dupB.Grants)
			dupB.Grants[0].No = decide(t, fzs["dupA"]).Grants[0].No
			for _, step := range []struct {
				name    string
				ds      []loot.Decision
				packets int64
				want    map[int]error // answers the calls must get, whichever path
			}{
				{"fences", []loot.Decision{
					decide(t, fzs["due"]), heldStale, decide(t, fzs["expired"]), decide(t, batched.frozen["expired"]),
					decide(t, batched.frozen["closed"]), decide(t, batched.frozen["canceled"]), decide(t, fzs["twice"]),
					decide(t, fzs["empty"]), decide(t, fzs["due"]),
				}, 3, map[int]error{1: loot.ErrStaleFence, 3: loot.ErrStaleFence, 5: loot.ErrCanceled}},
				// Packets not counted: a failed trip discards its
				// connection, and the next one's handshake is counted too.
				{"one grant number twice", []loot.Decision{decide(t, fzs["dupA"]), dupB}, -1, map[int]error{1: loot.ErrBadArgument}},
			} {
				before := batched.sent.n.Load()
				got, gotErrs := batched.s.RecordGrantsBatch(ctx, step.ds)
				if n := batched.sent.n.Load() - before; step.packets >= 0 && n != step.packets {
					t.Errorf("%s: a batch of %d RecordGrants cost %d packets sent, want %d", step.name, len(step.ds), n, step.packets)
				}
				for i, d := range step.ds {
					want, err := alone.s.RecordGrants(ctx, d)
					if diff := cmp.Diff(want, got[i]); diff != "" || errText(err) != errText(gotErrs[i]) {
						t.Errorf("%s: RecordGrants(%s, fence %d) #%d batched = %v; alone = %v; session (-alone +batched):\n%s", step.name, d.Session, d.Fence, i, gotErrs[i], err, diff)
					}
					if w := step.want[i]; (w == nil) != (gotErrs[i] == nil) || !errors.Is(gotErrs[i], w) {
						t.Errorf("%s: batched RecordGrants(%s, fence %d) = %v, want %v", step.name, d.Session, d.Fence, gotErrs[i], w)
					}
				}
			}
			for _, no := range nos {
				if diff := cmp.Diff(recorded(t, alone.s, no), recorded(t, batched.s, no)); diff != "" {
					t.Errorf("%s recorded (-alone +batched):\n%s", no, diff)
				}
			}
		})
	}
}

// TestRecordBatchAllClosed: a batch of RecordGrants that all close their
// sessions is answered by loot_record_batch_v4 with their count alone,
// and each call still gets the session as Session reads it after: those
// whose BeginSettle ran on this Store from what it read, those begun on
// another Store of the database by a read after the commit, one round
// trip each. So the batch costs three packets sent for two sessions begun
// elsewhere (the CALL and their two reads), which the read back the
// routine skipped would have answered in one.
func TestRecordBatchAllClosed(t *testing.T) {
	const reproduce = "ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run 'TestRecordBatchAllClosed' ./ref/loot/mysql/"
	defer func() {
		if t.Failed() {
			t.Log("to reproduce: " + reproduce)
		}
	}()
	w := newSettleWorld(t, "")
	other := openOpts(t, w.dsn, mysql.Options{})
	ctx := t.Context()
	var ds []loot.Decision
	for _, by := range []struct {
		s   *mysql.Store
		nos []string
	}{{w.s, []string{"due", "twice"}}, {other, []string{"dupA", "dupB"}}} {
		for _, no := range by.nos {
			fz, err := by.s.BeginSettle(ctx, no, time.Minute)
			if err != nil {
				t.Fatalf("BeginSettle(%s): %v", no, err)
			}
			ds = append(ds, decide(t, fz))
		}
	}
	before := w.sent.n.Load()
	got, errs := w.s.RecordGrantsBatch(ctx, ds)
	if n := w.sent.n.Load() - before; n != 3 {
		t.Errorf("a batch of %d RecordGrants that all close, 2 begun on another Store, cost %d packets sent, want 3", len(ds), n)
	}
	for i, d := range ds {
		if errs[i] != nil {
			t.Errorf("batched RecordGrants(%s) = %v", d.Session, errs[i])
			continue
		}
		want, err := other.Session(ctx, d.Session)
		if err != nil {
			t.Fatal(err)
		}
		if want.Status != loot.StatusClosed {
			t.Errorf("%s is %s after its RecordGrants, want CLOSED", d.Session, want.Status)
		}
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("batched RecordGrants(%s) answered another session than Session reads (-read +answered):\n%s", d.Session, diff)
		}
	}
}

// recorded is what the Reader shows of session no, errors as text.
func recorded(t *testing.T, s *mysql.Store, no string) []any {
	t.Helper()
	ctx := t.Context()
	sess, err1 := s.Session(ctx, no)
	gs, err2 := s.Grants(ctx, no)
	snap, err3 := s.Snapshot(ctx, no)
	return []any{sess, gs, snap, errText(err1), errText(err2), errText(err3)}
}

// TestBatchedSettlesRaceAsAlone: through one Store opened with
// Options.Batch, 40 settlers race two by two for 20 sessions, then the 20
// winners and the 20 losers (each with the winner's decision at a stale
// fence, fence 0) record at once. Calls share CALLs (fewer packets than
// calls), and each still gets its own answer: one winner per session at
// fence 1 with its 3 claims, ErrAlreadySettling for the other; CLOSED with
// 2 grants for the winner's decision, ErrStaleFence for the stale one.
// Run under -race.
func TestBatchedSettlesRaceAsAlone(t *testing.T) {
	const reproduce = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run 'TestBatchedSettlesRaceAsAlone' ./ref/loot/mysql/"
	const sessions = 20
	defer func() {
		if t.Failed() {
			t.Log("to reproduce: " + reproduce)
		}
	}()
	dsn := testserver.MariaDB(t)
	clock := newTestClock(t, dsn)
	var sent writes
	s := openOpts(t, dsn, mysql.Options{Batch: true, Config: sent.count})
	ctx := t.Context()
	var nos []string
	for i := range sessions {
		no := fmt.Sprintf("R-%d", i)
		if _, _, err := s.Open(ctx, loot.Spec{No: no, Dungeon: "D", Loot: "L", Quantity: 2, Deadline: clock.now(t).Add(time.Minute),
			Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2, 3}}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartClaiming(ctx, no); err != nil {
			t.Fatal(err)
		}
		for p := loot.PlayerID(1); p <= 3; p++ {
			if _, _, err := s.Claim(ctx, no, p, loot.Need); err != nil {
				t.Fatal(err)
			}
		}
		nos = append(nos, no)
	}
	clock.advance(t, time.Minute)
	fzs := make([]loot.Frozen, 2*sessions)
	before := sent.n.Load()
	errs := loottest.Together(2*sessions, func(i int) (err error) {
		fzs[i], err = s.BeginSettle(context.Background(), nos[i/2], time.Minute)
		return err
	})
	if n := sent.n.Load() - before; n >= 2*sessions {
		t.Errorf("%d packets sent for %d concurrent BeginSettles: no batch formed", n, 2*sessions)
	}
	ds := make([]loot.Decision, 2*sessions)
	for i := range sessions {
		win, lose := 2*i, 2*i+1
		if errs[win] != nil {
			win, lose = lose, win
		}
		if errs[win] != nil || !errors.Is(errs[lose], loot.ErrAlreadySettling) || fzs[win].Session.Fence != 1 || len(fzs[win].Claims) != 3 {
			t.Fatalf("%s: BeginSettles answered %v and %v (winner at fence %d with %d claims); want one winner at fence 1 with 3 claims, and ErrAlreadySettling",
				nos[i], errs[win], errs[lose], fzs[win].Session.Fence, len(fzs[win].Claims))
		}
		ds[2*i] = decide(t, fzs[win])
		ds[2*i+1] = ds[2*i]
		ds[2*i+1].Fence = 0
	}
	before = sent.n.Load()
	errs = loottest.Together(2*sessions, func(i int) error {
		_, err := s.RecordGrants(context.Background(), ds[i])
		return err
	})
	if n := sent.n.Load() - before; n >= 2*sessions {
		t.Errorf("%d packets sent for %d concurrent RecordGrants: no batch formed", n, 2*sessions)
	}
	for i, no := range nos {
		if errs[2*i] != nil || !errors.Is(errs[2*i+1], loot.ErrStaleFence) {
			t.Errorf("%s: RecordGrants at fence 1 = %v, at fence 0 = %v; want nil and ErrStaleFence", no, errs[2*i], errs[2*i+1])
		}
		if gs, err := s.Grants(ctx, no); err != nil || len(gs) != 2 {
			t.Errorf("%s: %d grants, %v; want 2", no, len(gs), err)
		}
	}
}

// TestBatchedNilContextIsRefused: with Options.Batch too, every method
// refuses a nil context with loot.ErrBadArgument, as without (the
// batcher's Do would read the nil context's Err and panic).
func TestBatchedNilContextIsRefused(t *testing.T) {
	const conns = 2
	st, err := mysql.Open(t.Context(), testserver.MariaDB(t), mysql.Options{Batch: true})
	if err != nil {
		t.Fatal(err)
	}
	st.DB().SetMaxOpenConns(conns)
	if loottest.RunNilContext(t, st, st.Inventory(), conns+1) {
		st.Close()
	}
}
