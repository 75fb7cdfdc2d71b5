package loottest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/ref/loot"
)

// checkNothingDeleted: allocation records are audit data. After every
// kind of change (claims replaced, sessions canceled in each status,
// grants delivered, compensation passes), every session, claim and grant
// written is still there as it was last written.
func checkNothingDeleted(t *testing.T, e *env) {
	s := e.store(t)
	var nos []string
	for _, st := range loot.Statuses() {
		nos = append(nos, e.build(t, s, st, 2, team(3)).No)
	}
	for _, st := range []loot.Status{loot.StatusOpen, loot.StatusSettling} {
		sess := e.build(t, s, st, 1, team(2))
		_, err := s.Cancel(ctx(t), sess.No)
		ok(t, "Cancel", err)
		nos = append(nos, sess.No)
	}
	changed := e.build(t, s, loot.StatusClaiming, 1, team(3))
	nos = append(nos, changed.No)
	type record struct {
		Session loot.Session
		Claims  []loot.Claim
		Grants  []loot.Grant
	}
	read := func(s loot.Store, no string) record {
		return record{session(t, s, no), claims(t, s, no), grants(t, s, no)}
	}
	// What was written, read before the changes below; the changes are
	// then applied to it from what the writes returned, not read back.
	want := map[string]record{}
	for _, no := range nos {
		want[no] = read(s, no)
	}
	c := mustClaim(t, s, changed.No, changed.Members[0], loot.Pass) // NEED -> PASS
	want[changed.No].Claims[0] = c
	for _, no := range nos {
		for i, g := range want[no].Grants {
			mustMark(t, s, g.No)
			want[no].Grants[i].Status = loot.GrantSuccess
		}
	}
	e.advance(t, 100*window)
	_, err := s.LeaseGrants(ctx(t), 100, backoff)
	ok(t, "LeaseGrants", err)
	_, err = s.Overdue(ctx(t), 100)
	ok(t, "Overdue", err)
	other := e.open(t)
	for _, no := range nos {
		if d := cmp.Diff(want[no], read(other, no)); d != "" {
			t.Errorf("session %s (%s) changed or lost records (-written +now):\n%s", no, want[no].Session.Status, d)
		}
	}
}

// checkTimes: every time a store returns is UTC at microsecond precision,
// from the store's clock: two claims 1µs apart keep distinct times (the
// source document's DATETIME makes claims in one second tie).
func checkTimes(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.claiming(t, s, 2, team(3))
	e.advance(t, 1234567*time.Nanosecond) // a clock with sub-microsecond digits
	at := func() time.Time { return loot.StoreTime(e.now(t)) }
	wantAt := at()
	c1 := mustClaim(t, s, sess.No, sess.Members[0], loot.Need)
	e.advance(t, time.Microsecond)
	c2 := mustClaim(t, s, sess.No, sess.Members[1], loot.Need)
	if !c1.At.Equal(wantAt) || c2.At.Sub(c1.At) != time.Microsecond {
		t.Errorf("claim times %v and %v, want %v and 1µs later", c1.At, c2.At, wantAt)
	}
	e.advance(t, window)
	settleAt := at()
	fz := mustBegin(t, s, sess.No)
	if want := settleAt.Add(leaseTime); !fz.Session.SettleUntil.Equal(want) {
		t.Errorf("SettleUntil %v, want %v", fz.Session.SettleUntil, want)
	}
	mustRecord(t, s, decide(t, fz, leaseTime))
	got := session(t, s, sess.No)
	times := map[string]time.Time{
		"Session.OpenedAt": got.OpenedAt, "Session.Deadline": got.Deadline, "Session.SettleUntil": got.SettleUntil,
		"Frozen.Session.OpenedAt": fz.Session.OpenedAt,
	}
	for _, c := range claims(t, s, sess.No) {
		times[fmt.Sprintf("Claims: At of %d", c.Player)] = c.At
	}
	for _, c := range fz.Claims {
		times[fmt.Sprintf("Frozen.Claims: At of %d", c.Player)] = c.At
	}
	for _, g := range grants(t, s, sess.No) {
		times["Grant.LeaseUntil of "+g.No] = g.LeaseUntil
		if !g.LeaseUntil.Equal(settleAt.Add(leaseTime)) {
			t.Errorf("grant %s LeaseUntil %v, want %v", g.No, g.LeaseUntil, settleAt.Add(leaseTime))
		}
	}
	for what, tm := range times {
		if tm.Location() != time.UTC || tm.Nanosecond()%1000 != 0 {
			t.Errorf("%s = %v (%s): want UTC at microsecond precision", what, tm, tm.Location())
		}
	}
}

// checkSnapshot: the snapshot comes back as recorded (claims with their
// fairness, hash, winners) and replays; before CLOSED there is none.
func checkSnapshot(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.claiming(t, s, 2, team(4))
	for i, in := range []loot.Intent{loot.Need, loot.Greed, loot.Pass, loot.Need} {
		mustClaim(t, s, sess.No, sess.Members[i], in)
		e.advance(t, time.Millisecond)
	}
	_, err := s.Snapshot(ctx(t), sess.No)
	wantErr(t, "Snapshot of a CLAIMING session", err, loot.ErrNotDue)
	_, err = s.Snapshot(ctx(t), "NO-SUCH-SESSION")
	wantErr(t, "Snapshot of a missing session", err, loot.ErrNotFound)
	e.advance(t, window)
	fz := mustBegin(t, s, sess.No)
	since := loot.StoreTime(e.now(t).Add(-90 * 24 * time.Hour))
	fair := map[loot.PlayerID]loot.Fairness{
		sess.Members[0]: {Wins: 3, SeedMilli: 1500, LastWin: since.Add(time.Hour), Since: since},
		sess.Members[1]: {Wins: 0, SeedMilli: 2250, Since: since},
		sess.Members[3]: {Wins: 1, Since: since.Add(24 * time.Hour)},
	}
	d, err := loot.Decide(fz, fair, 0)
	ok(t, "Decide", err)
	mustRecord(t, s, d)
	got, err := e.open(t).Snapshot(ctx(t), sess.No)
	ok(t, "Snapshot", err)
	if diff := cmp.Diff(d.Snapshot, got); diff != "" {
		t.Errorf("snapshot (-recorded +read back):\n%s", diff)
	}
	if err := loot.Replay(got); err != nil {
		t.Errorf("the snapshot read back does not replay: %v", err)
	}
}

// checkHandlesShare: what one handle (node) writes, another sees at once.
func checkHandlesShare(t *testing.T, e *env) {
	a, b := e.store(t), e.open(t)
	sess := e.claiming(t, a, 1, team(2))
	mustClaim(t, b, sess.No, sess.Members[0], loot.Need)
	if cs := claims(t, a, sess.No); len(cs) != 1 {
		t.Fatalf("a claim written through one handle is not seen through another: %v", cs)
	}
	_, err := b.Cancel(ctx(t), sess.No)
	ok(t, "Cancel", err)
	if st := session(t, a, sess.No).Status; st != loot.StatusCanceled {
		t.Fatalf("status after Cancel on another handle = %s", st)
	}
}

// checkCanceledContext: every method honours a cancelled context: it
// returns an error wrapping context.Canceled and writes nothing.
func checkCanceledContext(t *testing.T, e *env) {
	s := e.store(t)
	claiming := e.claiming(t, s, 1, team(2))
	settling := e.build(t, s, loot.StatusSettling, 1, team(2))
	closed := e.build(t, s, loot.StatusClosed, 1, team(2))
	open := e.build(t, s, loot.StatusOpen, 1, team(2))
	e.advance(t, 100*window)
	spec := e.spec(t, 1, team(2))
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	calls := map[string]func() error{
		"Open":          func() error { _, _, err := s.Open(cctx, spec); return err },
		"StartClaiming": func() error { _, err := s.StartClaiming(cctx, open.No); return err },
		"Claim":         func() error { _, _, err := s.Claim(cctx, claiming.No, claiming.Members[0], loot.Need); return err },
		"Cancel":        func() error { _, err := s.Cancel(cctx, claiming.No); return err },
		"BeginSettle":   func() error { _, err := s.BeginSettle(cctx, settling.No, leaseTime); return err },
		"RecordGrants": func() error {
			_, err := s.RecordGrants(cctx, decide(t, loot.Frozen{Session: settling, Claims: claims(t, s, settling.No)}, 0))
			return err
		},
		"MarkDelivered": func() error { _, err := s.MarkDelivered(cctx, grants(t, s, closed.No)[0].No); return err },
		"LeaseGrants":   func() error { _, err := s.LeaseGrants(cctx, 10, backoff); return err },
		"Overdue":       func() error { _, err := s.Overdue(cctx, 10); return err },
		"Session":       func() error { _, err := s.Session(cctx, claiming.No); return err },
		"Claims":        func() error { _, err := s.Claims(cctx, claiming.No); return err },
		"Grants":        func() error { _, err := s.Grants(cctx, closed.No); return err },
		"Snapshot":      func() error { _, err := s.Snapshot(cctx, closed.No); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context = %v, want an error wrapping context.Canceled", name, err)
		}
	}
	// Nothing was written.
	if _, err := s.Session(ctx(t), spec.No); !errors.Is(err, loot.ErrNotFound) {
		t.Errorf("Open with a cancelled context created %s (%v)", spec.No, err)
	}
	if cs := claims(t, s, claiming.No); len(cs) != 0 {
		t.Errorf("Claim with a cancelled context wrote %v", cs)
	}
	if st := session(t, s, claiming.No).Status; st != loot.StatusClaiming {
		t.Errorf("Cancel with a cancelled context moved the session to %s", st)
	}
	if st := session(t, s, open.No).Status; st != loot.StatusOpen {
		t.Errorf("StartClaiming with a cancelled context moved the session to %s", st)
	}
	if got := session(t, s, settling.No); got.Status != loot.StatusSettling || got.Fence != settling.Fence {
		t.Errorf("BeginSettle or RecordGrants with a cancelled context moved the session to %s fence %d", got.Status, got.Fence)
	}
	if g := grants(t, s, closed.No)[0]; g.Status != loot.GrantPending || g.Attempts != 0 {
		t.Errorf("MarkDelivered or LeaseGrants with a cancelled context changed grant %s: %s, attempt %d", g.No, g.Status, g.Attempts)
	}
}
