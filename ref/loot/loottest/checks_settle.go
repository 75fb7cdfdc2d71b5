package loottest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/ref/loot"
)

// checkSettleDue: the CAS is refused before the deadline by the store's
// clock, to the microsecond, and before claiming started whatever the
// deadline; at the deadline itself it wins with fence 1 and the lease runs
// from the store's now.
func checkSettleDue(t *testing.T, e *env) {
	s := e.store(t)
	open := e.build(t, s, loot.StatusOpen, 1, team(2)) // the same deadline as sess
	sess := e.build(t, s, loot.StatusClaiming, 1, team(2))
	e.advance(t, window-time.Microsecond)
	_, err := s.BeginSettle(ctx(t), sess.No, leaseTime)
	wantErr(t, "BeginSettle 1µs before the deadline (store clock)", err, loot.ErrNotDue)
	e.advance(t, time.Microsecond)
	_, err = s.BeginSettle(ctx(t), open.No, leaseTime)
	wantErr(t, "BeginSettle on an OPEN session at its deadline", err, loot.ErrNotDue)
	now := loot.StoreTime(e.now(t))
	fz := mustBegin(t, s, sess.No)
	got := fz.Session
	if got.Status != loot.StatusSettling || got.Fence != 1 || !got.SettleUntil.Equal(now.Add(leaseTime)) {
		t.Errorf("BeginSettle = %s fence %d until %v; want SETTLING fence 1 until %v", got.Status, got.Fence, got.SettleUntil, now.Add(leaseTime))
	}
	if d := cmp.Diff(got, session(t, s, sess.No)); d != "" {
		t.Errorf("BeginSettle's answer differs from the record (-answer +record):\n%s", d)
	}
}

// checkSettleOneWinner: 10 settlers at once on four handles (the source
// document's concurrent-settle test): exactly one wins the CAS.
func checkSettleOneWinner(t *testing.T, e *env) {
	const settlers = 10
	hs := []loot.Store{e.store(t), e.open(t), e.open(t), e.open(t)}
	sess := e.build(t, hs[0], loot.StatusClaiming, 1, team(3))
	e.advance(t, window)
	errs := Together(settlers, func(g int) error {
		_, err := hs[g%len(hs)].BeginSettle(ctx(t), sess.No, leaseTime)
		return err
	})
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, loot.ErrAlreadySettling):
			t.Errorf("a losing BeginSettle = %v, want ErrAlreadySettling", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d of %d concurrent BeginSettles won, want exactly 1", wins, settlers)
	}
	if got := session(t, hs[0], sess.No); got.Fence != 1 {
		t.Errorf("fence after one won CAS = %d, want 1", got.Fence)
	}
}

// checkSettleFrozen: the CAS hands back every claim, sorted by player,
// as recorded.
func checkSettleFrozen(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.claiming(t, s, 1, []loot.PlayerID{105, 101, 103, 102})
	for i, p := range []loot.PlayerID{103, 101, 105} {
		mustClaim(t, s, sess.No, p, []loot.Intent{loot.Need, loot.Pass, loot.Greed}[i])
		e.advance(t, time.Millisecond)
	}
	want := claims(t, s, sess.No)
	if got := players(want); !slices.Equal(got, []loot.PlayerID{101, 103, 105}) {
		t.Errorf("Claims players = %v, want [101 103 105] (sorted by player)", got)
	}
	e.advance(t, window)
	if d := cmp.Diff(want, mustBegin(t, s, sess.No).Claims); d != "" {
		t.Errorf("BeginSettle's frozen claims (-recorded +frozen):\n%s", d)
	}
}

// checkSettleTakeover: while a settler's lease lives no one else may
// settle; once it ends (store clock) another takes over with a new fence,
// and the old settler's RecordGrants is refused without a trace, before and
// after the new one records.
func checkSettleTakeover(t *testing.T, e *env) {
	a, b := e.store(t), e.open(t)
	sess := e.build(t, a, loot.StatusSettling, 1, team(3))
	old := decide(t, loot.Frozen{Session: sess, Claims: claims(t, a, sess.No)}, 0)
	e.advance(t, leaseTime-time.Microsecond)
	_, err := b.BeginSettle(ctx(t), sess.No, leaseTime)
	wantErr(t, "BeginSettle 1µs before the lease ends", err, loot.ErrAlreadySettling)
	e.advance(t, time.Microsecond)
	fz := mustBegin(t, b, sess.No)
	if fz.Session.Fence <= sess.Fence {
		t.Fatalf("takeover fence %d, want > %d", fz.Session.Fence, sess.Fence)
	}
	_, err = a.RecordGrants(ctx(t), old)
	wantErr(t, fmt.Sprintf("RecordGrants with the old fence %d after a takeover", old.Fence), err, loot.ErrStaleFence)
	if got := session(t, a, sess.No); got.Status != loot.StatusSettling || got.Fence != fz.Session.Fence {
		t.Errorf("after a stale RecordGrants: %s fence %d, want SETTLING fence %d", got.Status, got.Fence, fz.Session.Fence)
	}
	if gs := grants(t, a, sess.No); len(gs) != 0 {
		t.Errorf("a stale RecordGrants wrote grants %v", grantNos(gs))
	}
	mustRecord(t, b, decide(t, fz, 0))
	_, err = a.RecordGrants(ctx(t), old)
	wantErr(t, "RecordGrants with the old fence after the new settler closed", err, loot.ErrStaleFence)
	snap, err := a.Snapshot(ctx(t), sess.No)
	ok(t, "Snapshot", err)
	if snap.Fence != fz.Session.Fence {
		t.Errorf("the snapshot on record is fence %d's, want the takeover's %d", snap.Fence, fz.Session.Fence)
	}
}

// checkRecordAtomic: RecordGrants closes the session, inserts its grants
// PENDING with the first lease from the store's now, and the snapshot, all
// at once; a repeat by the same fence changes nothing.
func checkRecordAtomic(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.build(t, s, loot.StatusSettling, 2, team(3))
	d := decide(t, loot.Frozen{Session: sess, Claims: claims(t, s, sess.No)}, leaseTime)
	now := loot.StoreTime(e.now(t))
	got := mustRecord(t, s, d)
	if got.Status != loot.StatusClosed || got.Allocated != len(d.Grants) {
		t.Errorf("RecordGrants = %s allocated %d, want CLOSED allocated %d", got.Status, got.Allocated, len(d.Grants))
	}
	want := slices.Clone(d.Grants)
	for i := range want {
		want[i].LeaseUntil = now.Add(leaseTime)
	}
	if d := cmp.Diff(want, grants(t, s, sess.No)); d != "" {
		t.Errorf("recorded grants (-want +got):\n%s", d)
	}
	for range 2 {
		again, err := s.RecordGrants(ctx(t), d)
		if err != nil || again.Status != loot.StatusClosed {
			t.Errorf("repeated RecordGrants by the same fence = %s, %v; want CLOSED, nil", again.Status, err)
		}
	}
	if d := cmp.Diff(want, grants(t, s, sess.No)); d != "" {
		t.Errorf("grants after repeated RecordGrants (-want +got):\n%s", d)
	}
	_, err := s.BeginSettle(ctx(t), sess.No, leaseTime)
	wantErr(t, "BeginSettle on a CLOSED session", err, loot.ErrAlreadySettled)
	_, err = s.Cancel(ctx(t), sess.No)
	wantErr(t, "Cancel of a CLOSED session", err, loot.ErrAlreadySettled)
	other := d
	other.Fence++
	_, err = s.RecordGrants(ctx(t), other)
	wantErr(t, "RecordGrants by another fence on a CLOSED session", err, loot.ErrStaleFence)
}

// checkRecordAnswer: the session RecordGrants answers is the row as the
// close left it, field for field what Session reads after it, whether the
// handle that records is the one whose BeginSettle won the fence or
// another (a settler's successor in another process), and again on a
// repeat. A store may answer a close without reading the row back
// (ref/loot/mysql answers from what its BeginSettle read), and a stale
// field there (the lease, the fence, the members) shows only here.
func checkRecordAnswer(t *testing.T, e *env) {
	a, b := e.store(t), e.open(t)
	for _, rec := range []struct {
		by string
		s  loot.Store
	}{{"the handle that began the settle", a}, {"another handle", b}} {
		sess := e.build(t, a, loot.StatusSettling, 2, team(3))
		d := decide(t, loot.Frozen{Session: sess, Claims: claims(t, a, sess.No)}, leaseTime)
		got := mustRecord(t, rec.s, d)
		want := session(t, a, sess.No)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RecordGrants by %s answered another session than Session reads after it (-read +answered):\n%s", rec.by, diff)
		}
		again := mustRecord(t, rec.s, d)
		if diff := cmp.Diff(want, again); diff != "" {
			t.Errorf("a repeated RecordGrants by %s answered another session than Session reads (-read +answered):\n%s", rec.by, diff)
		}
	}
}

// checkRecordMalformed: a decision a unique index or the schema would
// refuse is refused whole: no grant, no snapshot, the session SETTLING.
func checkRecordMalformed(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.build(t, s, loot.StatusSettling, 3, team(3))
	good := decide(t, loot.Frozen{Session: sess, Claims: claims(t, s, sess.No)}, 0)
	if len(good.Grants) != 3 {
		t.Fatalf("loottest bug: %d grants", len(good.Grants))
	}
	dup := good
	dup.Grants = slices.Clone(good.Grants)
	dup.Grants[2] = dup.Grants[0] // the same grant number twice: the last insert of the batch fails
	other := good
	other.Grants = slices.Clone(good.Grants)
	other.Grants[1].Session = "ANOTHER-SESSION"
	for what, d := range map[string]loot.Decision{"a repeated grant number": dup, "a grant of another session": other} {
		_, err := s.RecordGrants(ctx(t), d)
		wantErr(t, "RecordGrants with "+what, err, loot.ErrBadArgument)
		if gs := grants(t, s, sess.No); len(gs) != 0 {
			t.Errorf("RecordGrants with %s wrote grants %v: not all or nothing", what, grantNos(gs))
		}
		if got := session(t, s, sess.No); got.Status != loot.StatusSettling {
			t.Errorf("RecordGrants with %s left the session %s, want SETTLING", what, got.Status)
		}
		_, err = s.Snapshot(ctx(t), sess.No)
		wantErr(t, "Snapshot after a refused RecordGrants", err, loot.ErrNotDue)
	}
	mustRecord(t, s, good)
}

// checkOverdue: Overdue lists CLAIMING sessions whose deadline is at or
// before now and SETTLING sessions whose lease is, nothing else, up to
// limit.
func checkOverdue(t *testing.T, e *env) {
	s := e.store(t)
	var want []string
	for _, st := range loot.Statuses() {
		sess := e.build(t, s, st, 1, team(2))
		if st == loot.StatusClaiming || st == loot.StatusSettling {
			want = append(want, sess.No)
		}
	}
	e.advance(t, window+leaseTime) // past every deadline and lease so far
	atDeadline := e.build(t, s, loot.StatusClaiming, 1, team(2))
	e.advance(t, window)
	want = append(want, atDeadline.No)
	live := e.build(t, s, loot.StatusSettling, 1, team(2)) // lease until now + leaseTime
	e.advance(t, leaseTime-time.Microsecond)
	got, err := s.Overdue(ctx(t), 100)
	ok(t, "Overdue", err)
	slices.Sort(want)
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Overdue (-want +got; %s's lease has 1µs left):\n%s", live.No, d)
	}
	if got, err := s.Overdue(ctx(t), 2); err != nil || len(got) != 2 {
		t.Errorf("Overdue(limit 2) = %v, %v; want 2 sessions", got, err)
	}
}
