package loottest

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/ref/loot"
)

// checkGrantForward: PENDING -> SUCCESS and never back: a repeat is nil, a
// repeated RecordGrants does not reset it, and compensation never leases
// a SUCCESS grant again.
func checkGrantForward(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.build(t, s, loot.StatusSettling, 2, team(3))
	d := decide(t, loot.Frozen{Session: sess, Claims: claims(t, s, sess.No)}, 0)
	mustRecord(t, s, d)
	done, pending := d.Grants[0].No, d.Grants[1].No
	for i := range 2 {
		g, err := s.MarkDelivered(ctx(t), done)
		if err != nil || g.Status != loot.GrantSuccess || g.No != done {
			t.Errorf("MarkDelivered #%d = %s %s, %v; want %s SUCCESS", i+1, g.No, g.Status, err, done)
		}
	}
	_, err := s.MarkDelivered(ctx(t), loot.GrantNo(sess.No, 999, lootCode))
	wantErr(t, "MarkDelivered of an unknown grant", err, loot.ErrNotFound)
	mustRecord(t, s, d) // a settler's retry
	e.advance(t, 100*window)
	leased, err := s.LeaseGrants(ctx(t), 100, backoff)
	ok(t, "LeaseGrants", err)
	if got := grantNos(leased); !slices.Equal(got, []string{pending}) {
		t.Errorf("LeaseGrants = %v, want only the PENDING %s", got, pending)
	}
	mustMark(t, s, pending)
	e.advance(t, 100*window)
	leased, err = s.LeaseGrants(ctx(t), 100, backoff)
	ok(t, "LeaseGrants", err)
	if len(leased) != 0 {
		t.Errorf("LeaseGrants after every grant is SUCCESS = %v", grantNos(leased))
	}
	for _, g := range grants(t, s, sess.No) {
		if g.Status != loot.GrantSuccess {
			t.Errorf("grant %s is %s after MarkDelivered, want SUCCESS", g.No, g.Status)
		}
	}
}

func mustMark(t *testing.T, s loot.Store, no string) {
	t.Helper()
	_, err := s.MarkDelivered(ctx(t), no)
	ok(t, "MarkDelivered("+no+")", err)
}

// checkLeaseConcurrent: 10 compensators at once on two handles, each
// asking for 2 grants of 6 due: every grant goes to exactly one of them,
// with attempt 1 and the first backoff step from the store's now.
func checkLeaseConcurrent(t *testing.T, e *env) {
	const compensators = 10
	hs := []loot.Store{e.store(t), e.open(t)}
	sess := e.build(t, hs[0], loot.StatusClosed, 6, team(6))
	now := loot.StoreTime(e.now(t))
	type answer struct {
		gs  []loot.Grant
		err error
	}
	as := Together(compensators, func(g int) answer {
		gs, err := hs[g%2].LeaseGrants(ctx(t), 2, backoff)
		return answer{gs, err}
	})
	got := map[string]int{}
	var wrong []loot.Grant
	for _, a := range as {
		ok(t, "concurrent LeaseGrants", a.err)
		for _, g := range a.gs {
			got[g.No]++
			if g.Attempts != 1 || !g.LeaseUntil.Equal(now.Add(backoff.Base)) {
				wrong = append(wrong, g)
			}
		}
	}
	for _, g := range grants(t, hs[0], sess.No) {
		if got[g.No] != 1 {
			t.Errorf("grant %s leased %d times by %d concurrent compensators, want exactly 1", g.No, got[g.No], compensators)
		}
	}
	for _, g := range wrong {
		t.Errorf("leased grant %s: attempt %d until %v, want attempt 1 until %v", g.No, g.Attempts, g.LeaseUntil, now.Add(backoff.Base))
	}
}

// checkLeaseBackoff: a grant is not leased while the settler's first
// lease lives, then each compensation lease holds it for the next backoff
// step (1s, 2s, 4s, 4s), to the microsecond of the store's clock.
func checkLeaseBackoff(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.build(t, s, loot.StatusSettling, 1, team(2))
	mustRecord(t, s, decide(t, loot.Frozen{Session: sess, Claims: claims(t, s, sess.No)}, leaseTime))
	wait := leaseTime
	for attempt, step := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		e.advance(t, wait-time.Microsecond)
		if gs, err := s.LeaseGrants(ctx(t), 10, backoff); err != nil || len(gs) != 0 {
			t.Fatalf("LeaseGrants 1µs before the lease ends = %v, %v; want none", grantNos(gs), err)
		}
		e.advance(t, time.Microsecond)
		now := loot.StoreTime(e.now(t))
		gs, err := s.LeaseGrants(ctx(t), 10, backoff)
		if err != nil || len(gs) != 1 {
			t.Fatalf("LeaseGrants when the lease ended = %v, %v; want the grant", grantNos(gs), err)
		}
		if g := gs[0]; g.Attempts != attempt+1 || !g.LeaseUntil.Equal(now.Add(step)) {
			t.Errorf("lease #%d: attempt %d until %v, want attempt %d until now+%v = %v", attempt+1, g.Attempts, g.LeaseUntil, attempt+1, step, now.Add(step))
		}
		wait = step
	}
}

// checkLeaseLimit: LeaseGrants hands out at most limit grants, the oldest
// lease first, so no grant starves behind newer ones.
func checkLeaseLimit(t *testing.T, e *env) {
	s := e.store(t)
	var want []string
	for range 5 {
		sess := e.build(t, s, loot.StatusClosed, 1, team(1)) // each records later than the last
		want = append(want, grants(t, s, sess.No)[0].No)
	}
	var got [][]string
	for range 4 {
		gs, err := s.LeaseGrants(ctx(t), 2, backoff)
		ok(t, "LeaseGrants(limit 2)", err)
		got = append(got, grantNos(gs))
	}
	if d := cmp.Diff([][]string{want[0:2], want[2:4], want[4:5], {}}, got); d != "" {
		t.Errorf("LeaseGrants(limit 2) batches, oldest lease first (-want +got):\n%s", d)
	}
}
