package ref

import (
	"context"
	"errors"
	"time"
)

// Claim is what Begin records for a new key.
type Claim struct {
	// Key is the 128-bit durable identity of the request.
	Key Key
	// Payload is what the Sink needs to deliver the effect (who, where, how
	// much), kept so that Recover can complete the grant after the claimant
	// died. The store copies it; the caller may reuse the slice after Begin.
	Payload []byte
	// LeaseUntil is when the claimant stops being presumed alive. Until then
	// Recover on other nodes leaves the record alone; after it, any node may
	// complete it. The zero time means "expired at once".
	LeaseUntil time.Time
}

// Record is one key's durable state, as Pending lists it.
type Record struct {
	Key        Key
	State      State
	Payload    []byte // owned by the caller once returned
	LeaseUntil time.Time
}

// Sentinel errors stores return (wrapped, test with errors.Is).
var (
	// ErrNotFound: Commit of a key that was never claimed. A Settler bug, not
	// a transient failure: retrying will not help.
	ErrNotFound = errors.New("ref: key not found")
	// ErrClosed: the store was closed; every later call fails with it.
	ErrClosed = errors.New("ref: store closed")
)

// Store is the durable half of dedup: a unique constraint keyed by the
// request's Key, plus the state of its grant. Begin must be atomic, which is
// exactly what a SQL UNIQUE index or a Redis SET NX gives.
//
// Contract for stores that can fail (every real database):
//
//   - Begin returns either a definite answer (err == nil) or an error that
//     means "outcome unknown": the record may or may not have been written
//     (a timeout after the insert landed is the usual case). The Settler then
//     remembers nothing (the Window is not marked) and returns the error, so
//     the sender retries. The retry's Begin either creates the record (the
//     first write never landed) or finds it in StateGranted with no live
//     owner, and completes it through the idempotent Sink. Either way nothing
//     is lost and nothing is granted twice.
//   - Commit moves a record forward and is idempotent: committing a state at
//     or below the recorded one is a no-op that returns nil; states never move
//     backwards. Commit of an unclaimed key returns ErrNotFound. Any other
//     error means "outcome unknown"; the record then stays StateGranted and
//     the next retry or Recover completes it.
//   - Both honour ctx: a cancelled context returns ctx.Err() (wrapped).
//   - After Close (where a store has one) every call returns ErrClosed.
//   - Stores must be safe for concurrent use.
type Store interface {
	// Begin inserts c.Key if absent, in StateGranted with c's payload and
	// lease, and reports the resulting state. created tells the caller whether
	// it now owns the grant; when created is false st is the state already on
	// record (StateGranted or StateDelivered).
	Begin(ctx context.Context, c Claim) (st State, created bool, err error)
	// Commit advances the recorded state of key to st.
	Commit(ctx context.Context, key Key, st State) error
}

// PendingStore is a Store that can list unfinished grants, which Recover
// needs. Every store in this module implements it.
type PendingStore interface {
	Store
	// Pending returns up to limit records in StateGranted whose lease ended at
	// or before now, in no particular order. An error means nothing can be
	// concluded; Recover reports it and the caller runs Recover again later.
	Pending(ctx context.Context, now time.Time, limit int) ([]Record, error)
}

// DeliveredClaimer is a Store that can claim a key directly in
// StateDelivered, in one atomic step. The seed-form Settle commits
// StateDelivered right after a successful claim (its caller delivers), so on
// such a store it makes one round trip instead of two. Semantics are Begin's,
// except that a created record starts in StateDelivered (and returns it).
type DeliveredClaimer interface {
	BeginDelivered(ctx context.Context, c Claim) (st State, created bool, err error)
}
