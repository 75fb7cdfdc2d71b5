package loot_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Each test here is one place where the reference departs from its source
// document: the same schedule breaks the document's logic (docLoot, in
// docmodel_test.go) and holds on the reference. The document half must
// break: if it stops breaking, the model no longer says what the document
// does, and the test fails.

// breaks fails t unless the document's logic broke as the test expects.
func breaks(t *testing.T, broke bool, what string) {
	t.Helper()
	if !broke {
		t.Fatalf("the document's logic no longer shows %s: docLoot no longer models it", what)
	}
}

// TestClaimCheckedThenWrittenCannotLandAfterSettleBegan: the document
// checks status and deadline, then writes. A claim checked a moment before
// the deadline and written after the settler froze the claim set is on
// record but was never ranked. The reference checks in the write itself.
func TestClaimCheckedThenWrittenCannotLandAfterSettleBegan(t *testing.T) {
	deadline := t0.Add(claimWindow)
	doc := newDoc(t0)
	doc.open("S", deadline)
	doc.submitIntent("S", 1001, "GREED", 0)
	doc.appNow, doc.dbNow = deadline.Add(-time.Second), deadline.Add(-time.Second)
	checked := doc.checkIntent("S") // 1002's NEED passes the check...
	doc.dbNow = deadline
	doc.lockForSettle("S")
	ranked := selectRanked(doc.intents["S"]) // ...the settler freezes and ranks...
	doc.upsertIntent("S", 1002, "NEED", 0)   // ...and the write lands after.
	breaks(t, checked && !slices.Equal(ranked, selectRanked(doc.intents["S"])),
		"a claim landing after the claim set was ranked")

	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001, 1002)
	w.claim(svc, "S", 1001, loot.Greed)
	w.advance(claimWindow)
	fz, err := w.store.BeginSettle(t.Context(), "S", time.Minute) // the settler's CAS
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Claim(t.Context(), loot.Caller{Player: 1002}, loot.ClaimRequest{Session: "S", Intent: loot.Need}); !errors.Is(err, loot.ErrClaimsClosed) {
		t.Errorf("claim after the CAS = %v, want ErrClaimsClosed", err)
	}
	if cs, _ := w.store.Claims(t.Context(), "S"); !slices.Equal(cs, fz.Claims) {
		t.Errorf("claims on record %v differ from the frozen %v", cs, fz.Claims)
	}
}

// TestClaimFromOutsideTheTeamIsRefused: the document's code never checks
// membership (its text says it should); an outsider who knows the session
// number claims and wins. The reference checks the member snapshot taken
// at Open, in the claim's write.
func TestClaimFromOutsideTheTeamIsRefused(t *testing.T) {
	doc := newDoc(t0)
	doc.open("S", t0.Add(claimWindow))
	doc.submitIntent("S", 1001, "GREED", 0)
	doc.submitIntent("S", 9999, "NEED", 0) // not in the team
	doc.dbNow = t0.Add(claimWindow)
	doc.lockForSettle("S")
	breaks(t, selectRanked(doc.intents["S"])[0] == 9999, "an outsider winning the drop")

	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001, 1002)
	w.claim(svc, "S", 1001, loot.Greed)
	if _, err := svc.Claim(t.Context(), loot.Caller{Player: 9999}, loot.ClaimRequest{Session: "S", Intent: loot.Need}); !errors.Is(err, loot.ErrNotMember) {
		t.Errorf("outsider's claim = %v, want ErrNotMember", err)
	}
	w.advance(claimWindow)
	if st, err := svc.Settle(t.Context(), "S"); err != nil || !slices.Equal(winners(st), []loot.PlayerID{1001}) {
		t.Errorf("Settle = %v, %v; want 1001 to win", winners(st), err)
	}
}

// TestClaimantAndFairnessAreTheServers: the document's controller reads
// playerId and fairScore from the request body: player 1003 PASSes for
// 1001 and sends itself a fairScore of -100. The reference takes the
// claimant from the authenticated Caller and fairness from the server's
// history; a request has no field for either.
func TestClaimantAndFairnessAreTheServers(t *testing.T) {
	doc := newDoc(t0)
	doc.open("S", t0.Add(claimWindow))
	doc.submitIntent("S", 1001, "NEED", 0)
	doc.submitIntent("S", 1001, "PASS", 0)    // sent by 1003's client
	doc.submitIntent("S", 1003, "NEED", -100) // likewise
	breaks(t, slices.Equal(selectRanked(doc.intents["S"]), []int64{1003}), "a client claiming for another and choosing its own score")

	w := newWorld(t)
	w.history.Set("RING-7", 1003, loot.Fairness{Wins: 3})
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001, 1003)
	w.claim(svc, "S", 1001, loot.Need)
	// 1003's client can only claim as 1003: the caller is who its
	// authenticated session says.
	if c := w.claim(svc, "S", 1003, loot.Need); c.Player != 1003 {
		t.Fatalf("claim recorded for %d", c.Player)
	}
	w.advance(claimWindow)
	if st, err := svc.Settle(t.Context(), "S"); err != nil || !slices.Equal(winners(st), []loot.PlayerID{1001}) {
		t.Errorf("Settle = %v, %v; want 1001 (no wins) over 1003 (3 wins)", winners(st), err)
	}
}

// TestUnlockNeverRemovesAnotherSettlersLock: the document releases with a
// GET, a comparison in the client and a DEL. Its key expires between the
// GET and the DEL, another settler takes it, and the DEL removes the new
// holder's lock: a third settler gets in. The reference's Release is one
// compare-and-delete.
func TestUnlockNeverRemovesAnotherSettlersLock(t *testing.T) {
	const ttl = 10 * time.Second
	key := loot.LockKey("S")
	doc := newDoc(t0)
	doc.setIfAbsent(key, "A", ttl)
	doc.redisNow = t0.Add(ttl - time.Millisecond)
	mine := doc.get(key) == "A"
	doc.redisNow = t0.Add(ttl) // A stalls between its GET and its DEL
	bGot := doc.setIfAbsent(key, "B", ttl)
	if mine {
		doc.del(key)
	}
	breaks(t, bGot && doc.setIfAbsent(key, "C", ttl), "a third settler holding the lock beside the second")

	w := newWorld(t)
	ctx := t.Context()
	acquire := func(token string) bool {
		ok, err := w.lock.Acquire(ctx, key, token, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	acquire("A")
	w.lockNow.Advance(ttl)
	if !acquire("B") {
		t.Fatal("B could not take the expired key")
	}
	if released, err := w.lock.Release(ctx, key, "A"); released || err != nil {
		t.Errorf("A's late Release = %v, %v; want false, nil", released, err)
	}
	if acquire("C") {
		t.Error("C took the key while B holds it")
	}
}

// TestRankingIsATotalOrder: the document's ORDER BY ends on created_at, a
// DATETIME in whole seconds. Two NEEDs 800ms apart with equal fair scores
// tie, and the database's row order picks the winner: two reads of the
// same rows can disagree, and the earlier claimant can lose. The reference
// keeps microseconds and ends the order on player id.
func TestRankingIsATotalOrder(t *testing.T) {
	doc := newDoc(t0)
	doc.open("S", t0.Add(claimWindow))
	doc.appNow = t0.Add(100 * time.Millisecond)
	doc.submitIntent("S", 1001, "NEED", 0)
	doc.appNow = t0.Add(900 * time.Millisecond)
	doc.submitIntent("S", 1002, "NEED", 0)
	rows := doc.intents["S"]
	reversed := slices.Clone(rows)
	slices.Reverse(reversed)
	breaks(t, selectRanked(rows)[0] != selectRanked(reversed)[0], "a result that depends on the database's row order")

	rank, _ := loot.RankerFor(loot.RuleSeeded)
	at := t0.Add(claimWindow)
	early := loot.Candidate{Claim: loot.Claim{Player: 1002, Intent: loot.Need, At: t0.Add(100 * time.Millisecond)}}
	late := loot.Candidate{Claim: loot.Claim{Player: 1001, Intent: loot.Need, At: t0.Add(900 * time.Millisecond)}}
	for _, order := range [][]loot.Candidate{{early, late}, {late, early}} {
		if got := rank(1, at, order); !slices.Equal(got, []loot.PlayerID{1002}) {
			t.Errorf("rank(%v) = %v, want the earlier claimant 1002 whatever the row order", order, got)
		}
	}
	// Same microsecond too: the player id decides, in every order.
	twin := late
	twin.At = early.At
	for _, order := range [][]loot.Candidate{{early, twin}, {twin, early}} {
		if got := rank(1, at, order); !slices.Equal(got, []loot.PlayerID{1001}) {
			t.Errorf("rank(%v) = %v, want 1001 (lower id) on a full tie", order, got)
		}
	}
}

// TestStaleSettlerIsFencedOff: the document has no way out of SETTLING
// for a settler that stalls; the obvious one, re-running the settle for a
// stuck session, has no fence: the stalled settler wakes and inserts its
// own winners beside the new settler's. Here the two read ties in
// different orders, and one ring becomes two. The reference's takeover
// gets a new fence and the stalled settler's write is refused.
func TestStaleSettlerIsFencedOff(t *testing.T) {
	doc := newDoc(t0)
	doc.open("S", t0.Add(claimWindow))
	doc.submitIntent("S", 1001, "NEED", 0)
	doc.submitIntent("S", 1002, "NEED", 0)
	doc.dbNow = t0.Add(claimWindow)
	doc.lockForSettle("S")
	a := selectRanked(doc.intents["S"])[0] // settler A ranks, then stalls
	rows := slices.Clone(doc.intents["S"])
	slices.Reverse(rows)
	b := selectRanked(rows)[0] // the re-run settler B reads the tie the other way
	doc.insertGrantIgnore(loot.GrantNo("S", loot.PlayerID(b), "RING-7"), b)
	doc.markClosed("S")
	doc.insertGrantIgnore(loot.GrantNo("S", loot.PlayerID(a), "RING-7"), a) // A wakes: no fence stops it
	breaks(t, len(doc.grants) == 2, "two grants for one item")

	// The reference: A stalls between its CAS and its RecordGrants; meanwhile
	// 1001 wins a ring elsewhere, so B, taking over, ranks differently.
	w := newWorld(t)
	paused := &pauseStore{Store: w.store, at: "RecordGrants", reached: make(chan struct{}), resume: make(chan struct{})}
	nodeA, nodeB := w.node(loot.Config{Store: paused, SettleLease: 10 * time.Second}), w.node(loot.Config{SettleLease: 10 * time.Second})
	w.claiming(nodeA, "S", 1, loot.RuleSeeded, 1001, 1002)
	w.claim(nodeA, "S", 1001, loot.Need)
	w.claim(nodeA, "S", 1002, loot.Need)
	w.advance(claimWindow)
	errA := make(chan error)
	go func() {
		_, err := nodeA.Settle(context.Background(), "S")
		errA <- err
	}()
	<-paused.reached
	w.history.Set("RING-7", 1001, loot.Fairness{Wins: 1})
	w.advance(10 * time.Second) // A's lease and lock end
	if rec, err := nodeB.Recover(t.Context()); err != nil || rec.Settled != 1 {
		t.Fatalf("B's Recover = %+v, %v; want the session taken over", rec, err)
	}
	close(paused.resume)
	if err := <-errA; !errors.Is(err, loot.ErrStaleFence) {
		t.Errorf("stalled settler A = %v, want ErrStaleFence", err)
	}
	if got := w.holders(1001, 1002); len(got) != 1 || got[1002] != 1 {
		t.Errorf("rings held = %v, want exactly one, 1002's (B's result)", got)
	}
	if _, err := nodeB.Audit(t.Context(), "S"); err != nil {
		t.Errorf("Audit: %v", err)
	}
}

// TestCanceledSessionNeverDelivers: the document lets SETTLING become
// CANCELED, and its grants are inserted before the session closes. A
// cancel between the two leaves PENDING grants in a canceled session, and
// the compensation job delivers them. In the reference grants exist only
// in CLOSED sessions, written with the close in one write that a Cancel
// cannot interleave: a Cancel before it voids the session (the settler's
// write is refused), after it is refused itself.
func TestCanceledSessionNeverDelivers(t *testing.T) {
	doc := settling("S", 1001)
	doc.insertGrantIgnore("S:1001:RING-7", 1001)
	canceled := doc.cancel("S") // the operator cancels mid-settle
	doc.markClosed("S")
	doc.compensate()
	breaks(t, canceled && doc.sessions["S"].status == "CANCELED" && doc.holding[1001] == 1,
		"an item delivered for a canceled session")

	w := newWorld(t)
	paused := &pauseStore{Store: w.store, at: "RecordGrants", reached: make(chan struct{}), resume: make(chan struct{})}
	settler, operator := w.node(loot.Config{Store: paused}), w.node(loot.Config{})
	for _, no := range []string{"CANCEL-FIRST", "SETTLE-FIRST"} {
		w.claiming(operator, no, 1, loot.RuleSeeded, 1001)
		w.claim(operator, no, 1001, loot.Need)
	}
	w.advance(claimWindow)
	errS := make(chan error)
	go func() {
		_, err := settler.Settle(context.Background(), "CANCEL-FIRST")
		errS <- err
	}()
	<-paused.reached // the settler won the CAS and has not recorded yet
	if _, err := operator.Cancel(t.Context(), "CANCEL-FIRST"); err != nil {
		t.Fatalf("Cancel of a SETTLING session: %v", err)
	}
	close(paused.resume)
	if err := <-errS; !errors.Is(err, loot.ErrCanceled) {
		t.Errorf("settler after the cancel = %v, want ErrCanceled", err)
	}
	if _, err := settler.Settle(t.Context(), "SETTLE-FIRST"); err != nil {
		t.Fatal(err)
	}
	if _, err := operator.Cancel(t.Context(), "SETTLE-FIRST"); !errors.Is(err, loot.ErrAlreadySettled) {
		t.Errorf("Cancel after the result was recorded = %v, want ErrAlreadySettled", err)
	}
	w.advance(time.Hour)
	if _, err := operator.Recover(t.Context()); err != nil {
		t.Fatal(err)
	}
	for no, want := range map[string]int{"CANCEL-FIRST": 0, "SETTLE-FIRST": 1} {
		if got := w.store.Applied(loot.GrantNo(no, 1001, "RING-7")); got != want {
			t.Errorf("%s: ring delivered %d times, want %d", no, got, want)
		}
	}
}

// TestCompensationReusesTheGrantNumber: the document says compensation
// must reuse the idempotency key; the shortcut it warns against, a fresh
// key per attempt, delivers twice when the first call timed out after it
// succeeded. The reference's Recover delivers through the recorded grant
// number, never a new one.
func TestCompensationReusesTheGrantNumber(t *testing.T) {
	doc := settling("S", 1001)
	doc.insertGrantIgnore("S:1001:RING-7", 1001)
	doc.markClosed("S")
	doc.deliver("S:1001:RING-7", 1001) // the item lands, the answer times out: still PENDING
	doc.compensateWithFreshKeys()
	breaks(t, doc.holding[1001] == 2, "two items for one grant")

	w := newWorld(t)
	inv := &lostAnswerInventory{Inventory: newLedger(), lose: 1} // an external inventory service
	svc := w.node(loot.Config{Inventory: inv})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001)
	w.claim(svc, "S", 1001, loot.Need)
	w.advance(claimWindow)
	st, err := svc.Settle(t.Context(), "S")
	if !errors.Is(err, loot.ErrOutcomeUnknown) || st.Session.Status != loot.StatusClosed {
		t.Fatalf("Settle with a lost inventory answer = %s, %v; want CLOSED and ErrOutcomeUnknown", st.Session.Status, err)
	}
	w.advance(time.Hour)
	if rec, err := svc.Recover(t.Context()); err != nil || rec.Delivered != 1 {
		t.Fatalf("Recover = %+v, %v; want one delivery", rec, err)
	}
	if n := inv.Inventory.(*ledger).applied("S:1001:RING-7"); n != 1 {
		t.Errorf("ring applied %d times, want 1", n)
	}
	if keys := inv.keys(); !slices.Equal(keys, []string{"S:1001:RING-7", "S:1001:RING-7"}) {
		t.Errorf("inventory calls keyed %v, want the grant number twice", keys)
	}
	if gs, _ := w.store.Grants(t.Context(), "S"); len(gs) != 1 || gs[0].Status != loot.GrantSuccess || gs[0].Attempts != 1 {
		t.Errorf("grants = %+v, want one SUCCESS after one compensation attempt", gs)
	}
}

// TestDeadlineIsTheDatabasesAlone: the document checks the deadline on
// the application's clock and settles on the database's. A node 3s behind
// takes a claim after the database's deadline passed; a node 3s ahead
// refuses one 2s before it. The reference's API takes no node clock: the
// store judges every deadline.
func TestDeadlineIsTheDatabasesAlone(t *testing.T) {
	deadline := t0.Add(claimWindow)
	doc := newDoc(t0)
	doc.open("S", deadline)
	doc.dbNow, doc.appNow = deadline.Add(time.Second), deadline.Add(-2*time.Second) // the slow node
	late := doc.submitIntent("S", 1002, "NEED", 0)
	doc.dbNow, doc.appNow = deadline.Add(-2*time.Second), deadline.Add(time.Second) // the fast node
	timely := doc.submitIntent("S", 1001, "NEED", 0)
	breaks(t, late && !timely, "a late claim taken and a timely one refused by skewed nodes")

	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001, 1002)
	w.advance(claimWindow - 2*time.Second)
	w.claim(svc, "S", 1001, loot.Need)
	w.advance(3 * time.Second)
	if _, err := svc.Claim(t.Context(), loot.Caller{Player: 1002}, loot.ClaimRequest{Session: "S", Intent: loot.Need}); !errors.Is(err, loot.ErrClaimsClosed) {
		t.Errorf("claim 1s after the database's deadline = %v, want ErrClaimsClosed", err)
	}
}

// TestSettlerCrashIsTakenOver: the document's settle is separate
// statements; a crash after its CAS leaves the session SETTLING for good
// (its CAS wants CLAIMING, its compensation scans grants), and the
// shortcut that closes before inserting grants leaves it CLOSED with none.
// Either way the item is never delivered. The reference records the close
// and the grants in one write, and Recover takes over a SETTLING session
// whose settler's lease ended.
func TestSettlerCrashIsTakenOver(t *testing.T) {
	doc := newDoc(t0)
	for _, no := range []string{"CRASH-AFTER-CAS", "CLOSED-BEFORE-GRANTS"} {
		doc.open(no, t0.Add(claimWindow))
		doc.submitIntent(no, 1001, "NEED", 0)
	}
	doc.dbNow = t0.Add(claimWindow)
	doc.lockForSettle("CRASH-AFTER-CAS") // crash
	doc.lockForSettle("CLOSED-BEFORE-GRANTS")
	doc.markClosed("CLOSED-BEFORE-GRANTS") // crash before the grant insert
	retried := doc.lockForSettle("CRASH-AFTER-CAS")
	doc.compensate()
	breaks(t, !retried && len(doc.applied) == 0 && doc.sessions["CRASH-AFTER-CAS"].status == "SETTLING",
		"a drop never delivered after a settler crash")

	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001)
	w.claim(svc, "S", 1001, loot.Need)
	w.advance(claimWindow)
	if _, err := w.store.BeginSettle(t.Context(), "S", loot.DefaultSettleLease); err != nil { // the crashed settler's CAS
		t.Fatal(err)
	}
	fresh := w.node(loot.Config{})
	if rec, err := fresh.Recover(t.Context()); err != nil || rec.Settled != 0 {
		t.Fatalf("Recover inside the dead settler's lease = %+v, %v; want nothing taken over", rec, err)
	}
	w.advance(loot.DefaultSettleLease)
	if rec, err := fresh.Recover(t.Context()); err != nil || rec.Settled != 1 || rec.Delivered != 1 {
		t.Fatalf("Recover after the lease = %+v, %v; want the session settled and its ring delivered", rec, err)
	}
	if got := w.holders(1001); got[1001] != 1 {
		t.Errorf("rings held by 1001: %d, want 1", got[1001])
	}
}

// winners returns the players a settlement granted, in rank order.
func winners(st loot.Settlement) []loot.PlayerID {
	out := make([]loot.PlayerID, len(st.Grants))
	for i, g := range st.Grants {
		out[i] = g.Player
	}
	return out
}

// pauseStore stalls the first call of method at (a GC pause, SIGSTOP)
// until resume is closed; reached is closed when it stalls.
type pauseStore struct {
	loot.Store
	at      string
	reached chan struct{}
	resume  chan struct{}
	once    sync.Once
}

func (s *pauseStore) stall(method string) {
	if method == s.at {
		s.once.Do(func() {
			close(s.reached)
			<-s.resume
		})
	}
}

func (s *pauseStore) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	s.stall("RecordGrants")
	return s.Store.RecordGrants(ctx, d)
}

// lostAnswerInventory applies each delivery, then loses the answer of the
// first lose calls (a timeout after success), and records the keys.
type lostAnswerInventory struct {
	loot.Inventory
	mu    sync.Mutex
	lose  int
	calls []string
}

var errLostAnswer = errors.New("inventory: timeout (the item may have landed)")

func (inv *lostAnswerInventory) Deliver(ctx context.Context, g loot.Grant) error {
	err := inv.Inventory.Deliver(ctx, g)
	inv.mu.Lock()
	defer inv.mu.Unlock()
	inv.calls = append(inv.calls, g.No)
	if err == nil && len(inv.calls) <= inv.lose {
		return errLostAnswer
	}
	return err
}

func (inv *lostAnswerInventory) keys() []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return slices.Clone(inv.calls)
}

// ledger is an external inventory service: a ledger keyed by grant number
// (its unique constraint), apart from the Store.
type ledger struct {
	mu sync.Mutex
	n  map[string]int
}

func newLedger() *ledger { return &ledger{n: map[string]int{}} }

func (l *ledger) Deliver(ctx context.Context, g loot.Grant) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[g.No] == 0 {
		l.n[g.No] = 1
	}
	return nil
}

func (l *ledger) applied(no string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[no]
}
