package loot

import (
	"fmt"
	"time"
)

// The guards below are the conditions of the Store's conditional writes as
// pure functions of the session row and the store's now. The status part of
// each is the transitions table. A SQL store writes the same condition in
// its UPDATE's WHERE clause; when the UPDATE matches no row it reads the
// row in the same transaction and returns the guard's error, so every store
// reports the same refusal for the same state. The memory store evaluates
// them under its lock.

// CheckStart is StartClaiming's condition. apply: write OPEN -> CLAIMING;
// !apply with a nil error: already CLAIMING (a retry), return the session
// unchanged; an error: refuse.
func CheckStart(s Session) (apply bool, err error) {
	switch {
	case CanTransition(OpStartClaiming, s.Status):
		return true, nil
	case s.Status == StatusClaiming:
		return false, nil
	}
	return false, statusErr(s)
}

// CheckClaim is Claim's condition: p is a member, the session is CLAIMING
// and now < Deadline. Membership is checked first, so an outsider learns
// nothing of the session's state.
func CheckClaim(s Session, p PlayerID, now time.Time) error {
	switch {
	case !s.IsMember(p):
		return fmt.Errorf("session %q, player %d: %w", s.No, p, ErrNotMember)
	case s.Status == StatusCanceled:
		return statusErr(s)
	case s.Status != StatusClaiming:
		return fmt.Errorf("session %q is %s: %w", s.No, s.Status, ErrClaimsClosed)
	case !now.Before(s.Deadline):
		return fmt.Errorf("session %q: deadline %v passed at store time %v: %w", s.No, s.Deadline, now, ErrClaimsClosed)
	}
	return nil
}

// CheckSettle is BeginSettle's condition: CLAIMING with now >= Deadline (a
// first settle), or SETTLING with now >= SettleUntil (a takeover). nil:
// write SETTLING, Fence+1, SettleUntil = now + lease.
func CheckSettle(s Session, now time.Time) error {
	if !CanTransition(OpBeginSettle, s.Status) {
		return statusErr(s)
	}
	switch {
	case s.Status == StatusClaiming && now.Before(s.Deadline):
		return fmt.Errorf("session %q: deadline %v not reached at store time %v: %w", s.No, s.Deadline, now, ErrNotDue)
	case s.Status == StatusSettling && now.Before(s.SettleUntil):
		return fmt.Errorf("session %q: settler with fence %d holds it until %v: %w", s.No, s.Fence, s.SettleUntil, ErrAlreadySettling)
	}
	return nil
}

// DueSince is Overdue's condition and order: whether the session can be
// settled at now (CheckSettle passes) and since when (its deadline, or
// the lease end of the settler that left it SETTLING). Overdue lists the
// due sessions oldest first, ties by number.
func DueSince(s Session, now time.Time) (since time.Time, due bool) {
	if CheckSettle(s, now) != nil {
		return time.Time{}, false
	}
	if s.Status == StatusSettling {
		return s.SettleUntil, true
	}
	return s.Deadline, true
}

// CheckRecord is RecordGrants' condition: SETTLING with the caller's fence.
// !apply with a nil error: CLOSED by this very fence (the settler's retry
// of a RecordGrants whose answer it lost), return the session unchanged.
func CheckRecord(s Session, f Fence) (apply bool, err error) {
	switch {
	case s.Status == StatusCanceled:
		return false, statusErr(s)
	case s.Fence != f:
		return false, fmt.Errorf("session %q: fence %d, store has %d: %w", s.No, f, s.Fence, ErrStaleFence)
	case CanTransition(OpRecordGrants, s.Status):
		return true, nil
	case s.Status == StatusClosed:
		return false, nil
	}
	return false, fmt.Errorf("session %q is %s: %w", s.No, s.Status, ErrStaleFence)
}

// CheckDecision is RecordGrants' check of the decision itself, once
// CheckRecord applied: the lease is not negative, and the snapshot and
// every grant are of d's session, no grant number twice. A store refuses a
// grant number it holds already too (SQL's unique key on it). The error
// wraps ErrBadArgument; the store writes nothing.
func CheckDecision(d Decision) error {
	bad := func(format string, args ...any) error {
		return badArg("decision for %q: %s", d.Session, fmt.Sprintf(format, args...))
	}
	if d.Lease < 0 {
		return bad("lease %v", d.Lease)
	}
	if d.Snapshot.Session != d.Session {
		return bad("snapshot of session %q", d.Snapshot.Session)
	}
	seen := make(map[string]bool, len(d.Grants))
	for _, g := range d.Grants {
		switch {
		case g.Session != d.Session:
			return bad("grant %q of session %q", g.No, g.Session)
		case seen[g.No]:
			return bad("grant number %q repeated", g.No)
		}
		seen[g.No] = true
	}
	return nil
}

// CheckCancel is Cancel's condition: OPEN, CLAIMING or SETTLING (no grant
// exists before CLOSED). !apply with a nil error: already CANCELED.
func CheckCancel(s Session) (apply bool, err error) {
	switch {
	case CanTransition(OpCancel, s.Status):
		return true, nil
	case s.Status == StatusCanceled:
		return false, nil
	}
	return false, statusErr(s)
}

// CheckOpen is Open's condition for a session that does not exist yet:
// the deadline must be after the store's now.
func CheckOpen(spec Spec, now time.Time) error {
	if !spec.Deadline.After(now) {
		return badArg("deadline %v is not after store time %v", spec.Deadline, now)
	}
	return nil
}

// statusErr is the refusal a session's status alone explains.
func statusErr(s Session) error {
	switch s.Status {
	case StatusOpen:
		return fmt.Errorf("session %q is OPEN (claiming not started): %w", s.No, ErrNotDue)
	case StatusClaiming:
		return fmt.Errorf("session %q is CLAIMING: %w", s.No, ErrNotDue)
	case StatusSettling:
		return fmt.Errorf("session %q is SETTLING (fence %d): %w", s.No, s.Fence, ErrAlreadySettling)
	case StatusClosed:
		return fmt.Errorf("session %q is CLOSED: %w", s.No, ErrAlreadySettled)
	case StatusCanceled:
		return fmt.Errorf("session %q is CANCELED: %w", s.No, ErrCanceled)
	}
	return fmt.Errorf("session %q has unknown status %q", s.No, s.Status)
}
