package loot

import (
	"errors"
	"fmt"
)

// Sentinel errors. Stores and the Service return them wrapped; test with
// errors.Is. Each says what the caller does next. A Store returns only
// these as definite answers; any other error from a Store, Lock,
// Inventory or FairnessProvider reaches the caller wrapped in
// ErrOutcomeUnknown.
var (
	// ErrNotFound: no session (or grant) with that number. Do not retry;
	// check the number.
	ErrNotFound = errors.New("loot: not found")
	// ErrNotMember: the caller is not in the session's member snapshot
	// (taken at Open; leaving the team later does not change it). Reject
	// the request; retrying will not help.
	ErrNotMember = errors.New("loot: not a member of the session")
	// ErrClaimsClosed: the session does not take claims (not CLAIMING, or
	// its deadline passed by the store's clock). Tell the player; do not
	// retry.
	ErrClaimsClosed = errors.New("loot: claims closed")
	// ErrNotDue: Settle before the deadline (store clock) or before
	// claiming started; Snapshot of a session without a result yet. Try
	// again after the deadline.
	ErrNotDue = errors.New("loot: not due")
	// ErrAlreadySettling: another settler holds the session (the lock, or
	// SETTLING with a live settle lease). Do nothing: the holder finishes,
	// or Recover takes over once its lease ends.
	ErrAlreadySettling = errors.New("loot: already settling")
	// ErrAlreadySettled: the session is CLOSED: its result is recorded.
	// Read it (Audit, Store.Grants); do not settle or cancel again.
	ErrAlreadySettled = errors.New("loot: already settled")
	// ErrCanceled: the session was canceled; it takes no claims and
	// delivers nothing. Do not retry.
	ErrCanceled = errors.New("loot: session canceled")
	// ErrBadArgument: the request is invalid (a quantity, code or deadline
	// out of Spec's ranges, empty or duplicated team, unknown intent or
	// rule, a deadline not after the store's now, a malformed number; a
	// value the database refused). Fix the request; do not retry as is.
	ErrBadArgument = errors.New("loot: bad argument")
	// ErrConflict: Open of a session number that exists with a different
	// definition. Do not retry; the number is taken.
	ErrConflict = errors.New("loot: session exists with another definition")
	// ErrStaleFence: the session's fence moved on (another settler took
	// over after this one's lease ended) or the write is not this
	// settler's. The settler stops and writes nothing more; the current
	// holder's result stands.
	ErrStaleFence = errors.New("loot: stale fence")
	// ErrOutcomeUnknown: a Store, Lock, Inventory or FairnessProvider call
	// failed without a definite answer (timeout, dropped connection,
	// cancelled context): what it wrote may or may not have landed. Retry
	// the same call (every call is idempotent) or leave it to Recover.
	ErrOutcomeUnknown = errors.New("loot: outcome unknown")
)

// definite are the errors a Store returns as answers; see Store.
var definite = []error{
	ErrNotFound, ErrNotMember, ErrClaimsClosed, ErrNotDue, ErrAlreadySettling,
	ErrAlreadySettled, ErrCanceled, ErrBadArgument, ErrStaleFence,
}

// classify returns err as it is when it is a definite answer, or wrapped
// in ErrOutcomeUnknown (keeping the cause) when it is not.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	for _, d := range definite {
		if errors.Is(err, d) {
			return fmt.Errorf("loot: %s: %w", op, err)
		}
	}
	return fmt.Errorf("loot: %s: %w: %w", op, ErrOutcomeUnknown, err)
}

// badArg returns an ErrBadArgument saying what is wrong.
func badArg(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBadArgument, fmt.Sprintf(format, args...))
}
