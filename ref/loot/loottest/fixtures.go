package loottest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// The suite's durations: whole milliseconds or more, so a store that keeps
// microseconds round-trips every time the suite computes.
const (
	window    = 10 * time.Second // claim window: deadline = now + window
	leaseTime = 5 * time.Second  // settle lease
)

// backoff is the compensation policy the grant checks use: 1s, 2s, 4s, 4s.
var backoff = loot.Backoff{Base: time.Second, Max: 4 * time.Second}

const lootCode = "RING-7"

// team returns n members, 101..100+n.
func team(n int) []loot.PlayerID {
	ps := make([]loot.PlayerID, n)
	for i := range ps {
		ps[i] = loot.PlayerID(101 + i)
	}
	return ps
}

// spec returns a fresh session's spec: a new number, the deadline one
// window after the store's now.
func (e *env) spec(t *testing.T, quantity int, members []loot.PlayerID) loot.Spec {
	t.Helper()
	e.mu.Lock()
	e.seq++
	no := fmt.Sprintf("S-%d", e.seq)
	e.mu.Unlock()
	return loot.Spec{
		No: no, Dungeon: "ABYSS-3", Loot: lootCode, Quantity: quantity,
		Deadline: e.now(t).Add(window), Rule: loot.RuleSeeded, Members: members,
	}
}

// claiming opens a CLAIMING session of members with quantity items and
// no claims yet; its deadline is one window away.
func (e *env) claiming(t *testing.T, s loot.Store, quantity int, members []loot.PlayerID) loot.Session {
	t.Helper()
	sess := mustOpen(t, s, e.spec(t, quantity, members))
	sess, err := s.StartClaiming(ctx(t), sess.No)
	ok(t, "StartClaiming", err)
	return sess
}

// build makes a session of members (each claims NEED) with quantity items
// and takes it to status st. For SETTLING and CLOSED the claim window has
// passed; CANCELED is canceled while CLAIMING. It returns the session.
func (e *env) build(t *testing.T, s loot.Store, st loot.Status, quantity int, members []loot.PlayerID) loot.Session {
	t.Helper()
	if st == loot.StatusOpen {
		return mustOpen(t, s, e.spec(t, quantity, members))
	}
	sess := e.claiming(t, s, quantity, members)
	var err error
	for _, p := range members {
		mustClaim(t, s, sess.No, p, loot.Need)
	}
	switch st {
	case loot.StatusClaiming:
		return sess
	case loot.StatusCanceled:
		sess, err = s.Cancel(ctx(t), sess.No)
		ok(t, "Cancel", err)
		return sess
	}
	e.advance(t, window)
	fz := mustBegin(t, s, sess.No)
	if st == loot.StatusSettling {
		return fz.Session
	}
	return mustRecord(t, s, decide(t, fz, 0))
}

// ok fails t on a non-nil error, saying what failed.
func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func mustOpen(t *testing.T, s loot.Store, spec loot.Spec) loot.Session {
	t.Helper()
	n, err := spec.Normalize()
	if err != nil {
		t.Fatalf("suite bug: %v", err)
	}
	sess, created, err := s.Open(ctx(t), n)
	if err != nil || !created {
		t.Fatalf("Open(%s) = created %v, %v; want a new session", spec.No, created, err)
	}
	return sess
}

func mustClaim(t *testing.T, s loot.Store, no string, p loot.PlayerID, in loot.Intent) loot.Claim {
	t.Helper()
	c, _, err := s.Claim(ctx(t), no, p, in)
	if err != nil {
		t.Fatalf("Claim(%s, %d, %s): %v", no, p, in, err)
	}
	return c
}

func mustBegin(t *testing.T, s loot.Store, no string) loot.Frozen {
	t.Helper()
	fz, err := s.BeginSettle(ctx(t), no, leaseTime)
	if err != nil {
		t.Fatalf("BeginSettle(%s): %v", no, err)
	}
	return fz
}

func mustRecord(t *testing.T, s loot.Store, d loot.Decision) loot.Session {
	t.Helper()
	sess, err := s.RecordGrants(ctx(t), d)
	if err != nil {
		t.Fatalf("RecordGrants(%s, fence %d): %v", d.Session, d.Fence, err)
	}
	return sess
}

// decide is the settler's decision for fz with no fairness history, whose
// grants' first lease is grantLease.
func decide(t *testing.T, fz loot.Frozen, grantLease time.Duration) loot.Decision {
	t.Helper()
	fair := map[loot.PlayerID]loot.Fairness{}
	for _, c := range fz.Claims {
		fair[c.Player] = loot.Fairness{}
	}
	d, err := loot.Decide(fz, fair, grantLease)
	if err != nil {
		t.Fatalf("Decide(%s): %v", fz.Session.No, err)
	}
	return d
}

func session(t *testing.T, s loot.Store, no string) loot.Session {
	t.Helper()
	sess, err := s.Session(ctx(t), no)
	ok(t, "Session("+no+")", err)
	return sess
}

func claims(t *testing.T, s loot.Store, no string) []loot.Claim {
	t.Helper()
	cs, err := s.Claims(ctx(t), no)
	ok(t, "Claims("+no+")", err)
	return cs
}

func grants(t *testing.T, s loot.Store, no string) []loot.Grant {
	t.Helper()
	gs, err := s.Grants(ctx(t), no)
	ok(t, "Grants("+no+")", err)
	return gs
}

// wantErr fails t unless err wraps want (want nil: err must be nil).
func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s = %v, want nil", what, err)
	case want != nil && !errors.Is(err, want):
		t.Errorf("%s = %v, want an error wrapping %v", what, err, want)
	}
}

// grantNos returns the grants' numbers in order.
func grantNos(gs []loot.Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.No
	}
	return out
}

// players returns the claims' players in order.
func players(cs []loot.Claim) []loot.PlayerID {
	out := make([]loot.PlayerID, len(cs))
	for i, c := range cs {
		out[i] = c.Player
	}
	return slices.Clip(out)
}
