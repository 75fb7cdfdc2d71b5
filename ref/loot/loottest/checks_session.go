package loottest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/ref/loot"
)

func checkOpenRecords(t *testing.T, e *env) {
	s := e.store(t)
	spec := e.spec(t, 2, []loot.PlayerID{103, 101, 102})
	// A deadline with nanoseconds, in another zone: stored as the same
	// instant in UTC, truncated to the microsecond.
	spec.Deadline = spec.Deadline.Add(1234 * time.Nanosecond).In(time.FixedZone("UTC+8", 8*3600))
	n, err := spec.Normalize()
	ok(t, "Normalize", err)
	now := loot.StoreTime(e.now(t))
	got := mustOpen(t, s, n)
	want := loot.Session{Spec: n, Status: loot.StatusOpen, OpenedAt: now}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Open returned (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, session(t, e.open(t), n.No)); d != "" {
		t.Fatalf("Session on another handle (-want +got):\n%s", d)
	}
}

func checkOpenIdempotent(t *testing.T, e *env) {
	s := e.store(t)
	first := mustOpen(t, s, e.spec(t, 1, team(3)))
	other := first.Spec
	other.Dungeon, other.Quantity, other.Members = "ELSEWHERE", 3, team(4)
	got, created, err := e.open(t).Open(ctx(t), other)
	if err != nil || created {
		t.Fatalf("second Open of %s = created %v, %v; want the recorded session, created false", first.No, created, err)
	}
	if d := cmp.Diff(first, got); d != "" {
		t.Fatalf("second Open returned another session (-first +got):\n%s", d)
	}
	if d := cmp.Diff(first, session(t, s, first.No)); d != "" {
		t.Fatalf("second Open changed the record (-first +now):\n%s", d)
	}
}

func checkOpenDeadline(t *testing.T, e *env) {
	s := e.store(t)
	spec := e.spec(t, 1, team(2))
	spec.Deadline = loot.StoreTime(e.now(t))
	_, _, err := s.Open(ctx(t), spec)
	wantErr(t, "Open with deadline == store now", err, loot.ErrBadArgument)
	_, err = s.Session(ctx(t), spec.No)
	wantErr(t, "Session after a refused Open", err, loot.ErrNotFound)
	spec.Deadline = spec.Deadline.Add(time.Microsecond)
	mustOpen(t, s, spec)
}

// refusals is the contract's answer for each op from each status its row
// of the transitions table does not list: the error to return, or nil for
// a repeat of a change already made (the session is left as it is).
var refusals = map[loot.Op]map[loot.Status]error{
	loot.OpStartClaiming: {
		loot.StatusClaiming: nil, loot.StatusSettling: loot.ErrAlreadySettling,
		loot.StatusClosed: loot.ErrAlreadySettled, loot.StatusCanceled: loot.ErrCanceled,
	},
	loot.OpBeginSettle: {
		loot.StatusOpen: loot.ErrNotDue, loot.StatusClosed: loot.ErrAlreadySettled, loot.StatusCanceled: loot.ErrCanceled,
	},
	loot.OpRecordGrants: {
		loot.StatusOpen: loot.ErrStaleFence, loot.StatusClaiming: loot.ErrStaleFence,
		loot.StatusClosed: nil, loot.StatusCanceled: loot.ErrCanceled,
	},
	loot.OpCancel: {loot.StatusClosed: loot.ErrAlreadySettled, loot.StatusCanceled: nil},
}

// checkTransitions applies every op to a session in every status, with
// every other condition of the op met (deadline passed, lease ended, the
// session's own fence), so that only the status decides: the store must
// make exactly the changes the table lists and refuse the rest, leaving
// the session as it was.
func checkTransitions(t *testing.T, e *env) {
	s := e.store(t)
	for _, op := range loot.Ops() {
		for _, from := range loot.Statuses() {
			sess := e.build(t, s, from, 1, team(2))
			switch {
			case op == loot.OpBeginSettle && from == loot.StatusClaiming:
				e.advance(t, window)
			case op == loot.OpBeginSettle && from == loot.StatusSettling:
				e.advance(t, leaseTime)
			}
			before := session(t, s, sess.No)
			err := apply(t, s, op, before)
			after := session(t, s, sess.No)
			what := fmt.Sprintf("%v on a %s session", op, from)
			if _, to := loot.Transition(op); loot.CanTransition(op, from) {
				if err != nil || after.Status != to {
					t.Errorf("%s = %v, status %s; the table allows %s -> %s", what, err, after.Status, from, to)
				}
				if op == loot.OpBeginSettle && after.Fence != before.Fence+1 {
					t.Errorf("%s: fence %d -> %d, want +1", what, before.Fence, after.Fence)
				}
				continue
			}
			want, listed := refusals[op][from]
			if !listed {
				t.Fatalf("loottest bug: no refusal listed for %s", what)
			}
			wantErr(t, what, err, want)
			if after.Status != before.Status || after.Fence != before.Fence {
				t.Errorf("%s moved the session %s/%d -> %s/%d; the table has no such change", what,
					before.Status, before.Fence, after.Status, after.Fence)
			}
		}
	}
}

// apply runs op on sess as its caller would.
func apply(t *testing.T, s loot.Store, op loot.Op, sess loot.Session) error {
	t.Helper()
	var err error
	switch op {
	case loot.OpStartClaiming:
		_, err = s.StartClaiming(ctx(t), sess.No)
	case loot.OpBeginSettle:
		_, err = s.BeginSettle(ctx(t), sess.No, leaseTime)
	case loot.OpRecordGrants:
		_, err = s.RecordGrants(ctx(t), decide(t, loot.Frozen{Session: sess, Claims: claims(t, s, sess.No)}, 0))
	case loot.OpCancel:
		_, err = s.Cancel(ctx(t), sess.No)
	default:
		t.Fatalf("loottest bug: op %v", op)
	}
	return err
}

// checkCancelVoids: a session canceled in each cancelable status takes no
// claim, never settles, never gets a grant, and a repeat Cancel is nil.
func checkCancelVoids(t *testing.T, e *env) {
	s := e.store(t)
	for _, from := range []loot.Status{loot.StatusOpen, loot.StatusClaiming, loot.StatusSettling} {
		sess := e.build(t, s, from, 1, team(2))
		for i := range 2 {
			got, err := s.Cancel(ctx(t), sess.No)
			if err != nil || got.Status != loot.StatusCanceled {
				t.Fatalf("Cancel #%d of a %s session = %s, %v; want CANCELED, nil", i+1, from, got.Status, err)
			}
		}
		_, _, err := s.Claim(ctx(t), sess.No, sess.Members[0], loot.Greed)
		wantErr(t, "Claim on a canceled session", err, loot.ErrCanceled)
		_, err = s.BeginSettle(ctx(t), sess.No, leaseTime)
		wantErr(t, "BeginSettle on a canceled session", err, loot.ErrCanceled)
		// The settler that won the CAS before the cancel cannot record.
		_, err = s.RecordGrants(ctx(t), decide(t, loot.Frozen{Session: sess, Claims: claims(t, s, sess.No)}, 0))
		wantErr(t, fmt.Sprintf("RecordGrants (fence %d) after Cancel of a %s session", sess.Fence, from), err, loot.ErrCanceled)
		_, err = s.Snapshot(ctx(t), sess.No)
		wantErr(t, "Snapshot of a canceled session", err, loot.ErrCanceled)
		if gs := grants(t, s, sess.No); len(gs) != 0 {
			t.Errorf("canceled %s session has grants %v", from, grantNos(gs))
		}
	}
	e.advance(t, window+leaseTime)
	gs, err := s.LeaseGrants(ctx(t), 100, backoff)
	ok(t, "LeaseGrants", err)
	if len(gs) != 0 {
		t.Errorf("LeaseGrants after cancels returned %v", grantNos(gs))
	}
}

// checkCancelRace races Cancel against the settler's RecordGrants on 20
// SETTLING sessions: exactly one may win each, and a canceled session
// must end with no grant at all.
func checkCancelRace(t *testing.T, e *env) {
	const sessions = 20
	a, b := e.store(t), e.open(t)
	type race struct {
		d                 loot.Decision
		cancelErr, recErr error
	}
	races := make([]*race, sessions)
	for i := range races {
		sess := e.build(t, a, loot.StatusClaiming, 2, team(3))
		e.advance(t, window)
		fz := mustBegin(t, a, sess.No)
		races[i] = &race{d: decide(t, fz, 0)}
	}
	// Goroutine 2i cancels race i, 2i+1 records it, on alternating handles.
	errs := Together(2*sessions, func(g int) error {
		r, hs := races[g/2], []loot.Store{a, b}
		if g%2 == 0 {
			_, err := hs[g/2%2].Cancel(ctx(t), r.d.Session)
			return err
		}
		_, err := hs[1-g/2%2].RecordGrants(ctx(t), r.d)
		return err
	})
	for i, r := range races {
		r.cancelErr, r.recErr = errs[2*i], errs[2*i+1]
	}
	for _, r := range races {
		no := r.d.Session
		st, gs := session(t, a, no).Status, grants(t, a, no)
		switch {
		case r.cancelErr == nil && r.recErr == nil:
			t.Errorf("%s: both Cancel and RecordGrants succeeded (status %s, %d grants)", no, st, len(gs))
		case r.cancelErr == nil:
			wantErr(t, no+": RecordGrants that lost to Cancel", r.recErr, loot.ErrCanceled)
			if st != loot.StatusCanceled || len(gs) != 0 {
				t.Errorf("%s: Cancel won, but status %s with grants %v", no, st, grantNos(gs))
			}
		case r.recErr == nil:
			wantErr(t, no+": Cancel that lost to RecordGrants", r.cancelErr, loot.ErrAlreadySettled)
			if st != loot.StatusClosed || len(gs) != len(r.d.Grants) {
				t.Errorf("%s: RecordGrants won, but status %s with %d grants, want CLOSED with %d", no, st, len(gs), len(r.d.Grants))
			}
		default:
			t.Errorf("%s: neither won: Cancel %v, RecordGrants %v", no, r.cancelErr, r.recErr)
		}
	}
}
