package loot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Config wires a Service to the world. The Service touches the world only
// through these interfaces, one effect per call, and keeps no state of its
// own between calls: a node may crash at any call and a fresh one carries
// on from the Store.
type Config struct {
	// Store is the durable state and the authority. Required.
	Store Store
	// Inventory delivers granted items. Required.
	Inventory Inventory
	// Fairness supplies the players' history for ranking. Required.
	Fairness FairnessProvider
	// Lock, if set, is taken around each Settle (an optimisation; see Lock).
	Lock Lock
	// LockTimeout bounds each Lock call (Acquire, Release) of a Settle;
	// past it the call counts as failed and the Settle goes on to the CAS,
	// as for any lock error. Zero means DefaultLockTimeout(SettleLease).
	LockTimeout time.Duration
	// Tokens is the source of lock tokens (16 bytes each). Nil means
	// crypto/rand.Reader; tests pass a seeded reader. A read error skips the
	// lock for that Settle (the CAS decides anyway).
	Tokens io.Reader
	// SettleLease is how long a settler is presumed alive after its CAS
	// (store clock) and the lock's ttl (lock clock); after it any node may
	// take the session over, and the old settler's writes are fenced off.
	// Pick it above the slowest BeginSettle -> RecordGrants you expect.
	// Zero means DefaultSettleLease.
	SettleLease time.Duration
	// Backoff is the compensation lease policy. Zero means DefaultBackoff.
	Backoff Backoff
	// Batch bounds one Overdue or LeaseGrants call of Recover. Zero means
	// DefaultBatch.
	Batch int
	_     struct{}
}

// DefaultSettleLease: far above a settle's two database round trips and
// one FairnessProvider read, short enough that a dead settler's session is
// taken over within a minute (the source document's lock ttl is 10s and
// its claim window 15 to 60s).
const DefaultSettleLease = 30 * time.Second

// DefaultBatch bounds what one Recover step loads into memory.
const DefaultBatch = 64

// Service is the loot allocation reference: Open, StartClaiming, Claim,
// Cancel, Settle, Recover, Audit. Safe for concurrent use; build one per
// process, any number of processes on one Store.
//
// Its effects beside the Store are Lock, Inventory and FairnessProvider.
//
// The caller's duties:
//
//  1. Build one Service per process with New; every process shares the Store.
//  2. Open a session per shared drop (team snapshot, deadline as an instant
//     the database's clock will judge) and StartClaiming when it is shown.
//  3. Claim with the Caller your authentication established, never with a
//     player id or score from the request body.
//  4. Settle from the server (a scheduler at the deadline), never on a
//     player's request. ErrNotDue: later; ErrAlreadySettling/Settled: done.
//  5. Run Recover at start and periodically on every node: it settles
//     overdue and stalled sessions and delivers PENDING grants.
//  6. Make the Inventory idempotent by grant number; its errors are unknown.
//  7. Give the application's database role SELECT, INSERT, UPDATE only
//     (and EXECUTE on MySQL/MariaDB, whose store calls its own routines:
//     no DELETE, no DDL).
//
// Where the Service departs from the source document, and why (each has a
// test that breaks a model of the document's logic, departures_test.go):
//
//   - A claim's status, deadline and membership are checked in its write,
//     not before it, so no claim lands after settling began or from outside.
//   - The claim time is the current intent's: a change moves it, a repeat
//     keeps it (the document's ON DUPLICATE KEY UPDATE keeps created_at, so
//     an early GREED upgraded late would rank before every NEED declared in
//     between: "first come, first served" would reward a reflex, not the
//     decision).
//   - Deadlines and leases are judged by the database's clock alone; times
//     are kept in UTC at microseconds (DATETIME's seconds make ties).
//   - The claimant comes from the Caller and fairness from the server.
//   - Ranking ends on player id, a total order; the document's cold-start
//     fixes (8.3) are rule versions beside its own rule.
//   - A stalled settler's session is taken over after its lease, under a
//     new fence that refuses the old settler's write.
//   - Closing, the grants and the snapshot are one write, and Cancel is only
//     possible before it: a canceled session never has a grant to deliver.
//   - The lock is released by compare-and-delete; compensation is leased,
//     backs off, and delivers through the recorded grant number.
type Service struct {
	store   Store
	inv     Inventory
	binv    BatchInventory // inv, if it takes a batch (nil otherwise)
	marker  BatchMarker    // the Store, if it marks a batch (nil otherwise)
	fair    FairnessProvider
	lock    Lock
	lockMax time.Duration // each lock call's bound (Config.LockTimeout)
	lease   time.Duration
	backoff Backoff
	batch   int
	tokMu   sync.Mutex
	tokens  io.Reader
}

// New validates cfg and builds a Service.
func New(cfg Config) (*Service, error) {
	if cfg.Store == nil || cfg.Inventory == nil || cfg.Fairness == nil {
		return nil, badArg("Config needs Store, Inventory and Fairness")
	}
	s := &Service{
		store: checkedStore{cfg.Store}, inv: cfg.Inventory, fair: cfg.Fairness, lock: cfg.Lock,
		lease: cfg.SettleLease, lockMax: cfg.LockTimeout, backoff: cfg.Backoff, batch: cfg.Batch, tokens: cfg.Tokens,
	}
	// Asserted on cfg.Store, not s.store: checkedStore hides the methods
	// beyond Store (MarkDeliveredBatch takes grant numbers, which
	// CheckSessionNo does not cover).
	s.binv, _ = cfg.Inventory.(BatchInventory)
	s.marker, _ = cfg.Store.(BatchMarker)
	if s.lease == 0 {
		s.lease = DefaultSettleLease
	}
	if s.lockMax == 0 {
		s.lockMax = DefaultLockTimeout(s.lease)
	}
	if s.backoff == (Backoff{}) {
		s.backoff = DefaultBackoff
	}
	if s.batch == 0 {
		s.batch = DefaultBatch
	}
	if s.tokens == nil {
		s.tokens = rand.Reader
	}
	switch {
	case s.lease < 0:
		return nil, badArg("SettleLease %v < 0", s.lease)
	case s.lockMax < 0:
		return nil, badArg("LockTimeout %v < 0", s.lockMax)
	case s.batch < 0:
		return nil, badArg("Batch %d < 0", s.batch)
	}
	if err := s.backoff.validate(); err != nil {
		return nil, err
	}
	return s, nil
}

// Open records a session for one team drop (spec is validated and
// normalized first). Opening is idempotent: a retry with the same spec
// returns the recorded session; the same number with another spec is
// ErrConflict. A deadline not after the store's now is ErrBadArgument.
func (s *Service) Open(ctx context.Context, spec Spec) (Session, error) {
	n, err := spec.Normalize()
	if err != nil {
		return Session{}, fmt.Errorf("loot: open: %w", err)
	}
	sess, created, err := s.store.Open(ctx, n)
	if err != nil {
		return Session{}, classify("open "+n.No, err)
	}
	if !created && !sess.Same(n) {
		return sess, fmt.Errorf("loot: open %s: %w", n.No, ErrConflict)
	}
	return sess, nil
}

// StartClaiming opens the session to claims (OPEN -> CLAIMING); a retry on
// a CLAIMING session is nil.
func (s *Service) StartClaiming(ctx context.Context, no string) (Session, error) {
	sess, err := s.store.StartClaiming(ctx, no)
	return sess, classify("start claiming "+no, err)
}

// Claim records the claim of who, the authenticated caller (see Caller);
// the request carries no player. Membership, status and deadline are
// judged by the store in the same write. A repeated claim is a no-op; a
// changed intent replaces the previous one (one effective claim per
// player).
func (s *Service) Claim(ctx context.Context, who Caller, req ClaimRequest) (Claim, error) {
	if who.Player <= 0 {
		return Claim{}, fmt.Errorf("loot: claim: %w", badArg("no authenticated player"))
	}
	if err := req.Validate(); err != nil {
		return Claim{}, fmt.Errorf("loot: claim: %w", err)
	}
	c, _, err := s.store.Claim(ctx, req.Session, who.Player, req.Intent)
	return c, classify(fmt.Sprintf("claim %s by %d", req.Session, who.Player), err)
}

// Cancel voids the session if no result is recorded yet (OPEN, CLAIMING or
// SETTLING; a repeat is nil). A CLOSED session is ErrAlreadySettled: its
// grants stand. Cancel and the settler's RecordGrants are one conditional
// write each on the session row, so exactly one wins; a canceled session
// has no grant and delivers nothing.
func (s *Service) Cancel(ctx context.Context, no string) (Session, error) {
	sess, err := s.store.Cancel(ctx, no)
	return sess, classify("cancel "+no, err)
}

// Audit reads the session's snapshot and replays it (Replay), and checks
// that the grants on record are the snapshot's winners. A mismatch is a
// *ReplayError with a go-cmp diff.
func (s *Service) Audit(ctx context.Context, no string) (Snapshot, error) {
	snap, err := s.store.Snapshot(ctx, no)
	if err != nil {
		return Snapshot{}, classify("audit "+no, err)
	}
	if err := Replay(snap); err != nil {
		return snap, err
	}
	gs, err := s.store.Grants(ctx, no)
	if err != nil {
		return snap, classify("audit "+no+": grants", err)
	}
	if err := checkGrants(snap, gs); err != nil {
		return snap, err
	}
	return snap, nil
}

// token returns a fresh lock token.
func (s *Service) token() (string, error) {
	var b [16]byte
	s.tokMu.Lock()
	_, err := io.ReadFull(s.tokens, b[:])
	s.tokMu.Unlock()
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// isSettled reports whether err says the session needs no settling by
// this caller: another holds it, it is done, or it is not due.
func isSettled(err error) bool {
	return errors.Is(err, ErrAlreadySettling) || errors.Is(err, ErrAlreadySettled) ||
		errors.Is(err, ErrCanceled) || errors.Is(err, ErrNotDue)
}
