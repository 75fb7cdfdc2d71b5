package loottest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/ref/loot"
)

// checkClaimUpsertConcurrent: 20 identical claims at once, over two
// handles (a client's retries landing on two nodes), leave one row, created
// by exactly one of them, and every caller sees the same claim.
func checkClaimUpsertConcurrent(t *testing.T, e *env) {
	const goroutines = 20 // the source document's concurrent-claim test
	hs := []loot.Store{e.store(t), e.open(t)}
	sess := e.claiming(t, hs[0], 1, team(3))
	p := sess.Members[0]
	type answer struct {
		c       loot.Claim
		created bool
		err     error
	}
	as := Together(goroutines, func(g int) answer {
		c, cr, err := hs[g%2].Claim(ctx(t), sess.No, p, loot.Need)
		return answer{c, cr, err}
	})
	created := 0
	for _, a := range as {
		ok(t, "concurrent identical Claim", a.err)
		if a.created {
			created++
		}
	}
	if created != 1 {
		t.Errorf("%d of %d identical claims report created, want exactly 1", created, goroutines)
	}
	rows := claims(t, hs[0], sess.No)
	if len(rows) != 1 {
		t.Fatalf("after %d identical claims Claims has %d rows, want 1: %v", goroutines, len(rows), rows)
	}
	for _, a := range as {
		if d := cmp.Diff(rows[0], a.c); d != "" {
			t.Fatalf("a caller was answered another claim than the one recorded (-recorded +answer):\n%s", d)
		}
	}
}

// checkClaimRetry: a repeat of the same intent changes nothing (not even
// the claim time); another intent, up or down, replaces it and takes the
// store's now (the claim time is the current intent's: a GREED sent early
// and upgraded late must not keep its early place), which a repeat of the
// new intent keeps in turn.
func checkClaimRetry(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.claiming(t, s, 1, team(3))
	p, q := sess.Members[0], sess.Members[1]
	first, created, err := s.Claim(ctx(t), sess.No, p, loot.Greed)
	if err != nil || !created {
		t.Fatalf("first Claim = created %v, %v; want created", created, err)
	}
	e.advance(t, time.Millisecond)
	again, created, err := s.Claim(ctx(t), sess.No, p, loot.Greed)
	if err != nil || created || !again.At.Equal(first.At) || again.Intent != loot.Greed {
		t.Errorf("repeated Claim = %+v created %v, %v; want the first claim (At %v) unchanged", again, created, err, first.At)
	}
	e.advance(t, time.Millisecond)
	now := loot.StoreTime(e.now(t))
	changed, created, err := s.Claim(ctx(t), sess.No, p, loot.Need)
	if err != nil || created || changed.Intent != loot.Need || !changed.At.Equal(now) {
		t.Errorf("changed Claim = %+v created %v, %v; want NEED at the store's now %v, created false", changed, created, err, now)
	}
	e.advance(t, time.Millisecond)
	if again, _, err := s.Claim(ctx(t), sess.No, p, loot.Need); err != nil || !again.At.Equal(now) {
		t.Errorf("repeated changed Claim = %+v, %v; want NEED at the change's time %v", again, err, now)
	}
	e.advance(t, time.Millisecond)
	down := loot.StoreTime(e.now(t))
	if back, _, err := s.Claim(ctx(t), sess.No, p, loot.Greed); err != nil || back.Intent != loot.Greed || !back.At.Equal(down) {
		t.Errorf("Claim back to GREED = %+v, %v; want GREED at the store's now %v", back, err, down)
	}
	pass := mustClaim(t, s, sess.No, q, loot.Pass)
	want := []loot.Claim{
		{Session: sess.No, Player: p, Intent: loot.Greed, At: down},
		{Session: sess.No, Player: q, Intent: loot.Pass, At: pass.At},
	}
	if d := cmp.Diff(want, claims(t, s, sess.No)); d != "" {
		t.Errorf("Claims (-want +got):\n%s", d)
	}
}

// checkClaimDeadline: claims are taken while the store's now < deadline,
// to the microsecond, and refused from the deadline on.
func checkClaimDeadline(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.claiming(t, s, 1, team(3))
	e.advance(t, window-time.Microsecond)
	first := mustClaim(t, s, sess.No, sess.Members[0], loot.Need)
	e.advance(t, time.Microsecond)
	_, _, err := s.Claim(ctx(t), sess.No, sess.Members[1], loot.Need)
	wantErr(t, "Claim at the deadline (store clock)", err, loot.ErrClaimsClosed)
	_, _, err = s.Claim(ctx(t), sess.No, sess.Members[0], loot.Greed)
	wantErr(t, "changing a claim at the deadline", err, loot.ErrClaimsClosed)
	if d := cmp.Diff([]loot.Claim{first}, claims(t, s, sess.No)); d != "" {
		t.Errorf("a refused claim was written (-want +got):\n%s", d)
	}
}

// checkClaimStatus: only a CLAIMING session takes claims, whatever the
// deadline says; a refused claim writes nothing.
func checkClaimStatus(t *testing.T, e *env) {
	s := e.store(t)
	for st, want := range map[loot.Status]error{
		loot.StatusOpen:     loot.ErrClaimsClosed,
		loot.StatusSettling: loot.ErrClaimsClosed,
		loot.StatusClosed:   loot.ErrClaimsClosed,
		loot.StatusCanceled: loot.ErrCanceled,
	} {
		sess := e.build(t, s, st, 1, team(2))
		before := claims(t, s, sess.No)
		_, _, err := s.Claim(ctx(t), sess.No, sess.Members[0], loot.Greed)
		wantErr(t, fmt.Sprintf("Claim on a %s session", st), err, want)
		if d := cmp.Diff(before, claims(t, s, sess.No)); d != "" {
			t.Errorf("a refused Claim on a %s session changed the claims (-before +after):\n%s", st, d)
		}
	}
}

// checkClaimMembers: only the member snapshot may claim.
func checkClaimMembers(t *testing.T, e *env) {
	s := e.store(t)
	sess := e.claiming(t, s, 1, team(2))
	_, _, err := s.Claim(ctx(t), sess.No, 999, loot.Need)
	wantErr(t, "Claim by a non-member", err, loot.ErrNotMember)
	if cs := claims(t, s, sess.No); len(cs) != 0 {
		t.Errorf("a non-member's claim was written: %v", cs)
	}
	_, _, err = s.Claim(ctx(t), "NO-SUCH-SESSION", sess.Members[0], loot.Need)
	wantErr(t, "Claim on a missing session", err, loot.ErrNotFound)
}

// checkClaimFrozen: members keep changing their claims while the deadline
// passes and a settler wins the CAS. The claims the CAS returned must be
// the claims on record afterwards, and each player's last accepted claim:
// a claim checked before the deadline and written after the CAS (the
// source document's check-then-write) shows as a difference.
func checkClaimFrozen(t *testing.T, e *env) {
	const players = 8
	a, b := e.store(t), e.open(t)
	sess := e.claiming(t, a, 1, team(players))
	intents := []loot.Intent{loot.Need, loot.Greed, loot.Pass}
	last := make([]loot.Intent, players)
	var (
		warm, wg sync.WaitGroup
		done     = make(chan struct{})
	)
	for i, p := range sess.Members {
		warm.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			warmed := false
			for n := 0; ; n++ {
				in := intents[(n+i)%len(intents)]
				_, _, err := a.Claim(ctx(t), sess.No, p, in)
				switch {
				case err == nil:
					last[i] = in
					if !warmed {
						warmed = true
						warm.Done()
					}
				case !errors.Is(err, loot.ErrClaimsClosed):
					t.Errorf("Claim by %d: %v", p, err)
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	warm.Wait()
	e.advance(t, window)
	fz := mustBegin(t, b, sess.No)
	close(done)
	wg.Wait()
	if d := cmp.Diff(fz.Claims, claims(t, a, sess.No)); d != "" {
		t.Errorf("claims changed after the CAS froze them (-frozen +on record):\n%s", d)
	}
	for i, p := range sess.Members {
		var frozen loot.Intent
		for _, c := range fz.Claims {
			if c.Player == p {
				frozen = c.Intent
			}
		}
		if frozen != last[i] {
			t.Errorf("player %d: last accepted claim %s, frozen %q", p, last[i], frozen)
		}
	}
}
