package ref

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Settler grants an effect at most once per key, and (with a Sink) exactly
// once. It stacks three layers:
//
//  1. Window: an exact in-memory idempotency window (bounded by rate x ttl)
//     that answers the common retry without touching the database.
//  2. Store: a durable unique constraint on the request's 128-bit Key (a SQL
//     UNIQUE index, a Redis script): it catches what the window has
//     forgotten.
//  3. A state machine New -> Granted -> Delivered, with an idempotent Sink,
//     so a replay is a no-op and a grant cut in half by a crash is completed,
//     never repeated.
//
// The caller's duties:
//
//  1. Derive the request's Key from its business identity with KeyOf (for a
//     game settlement: player, match id, kind), identically on every node
//     and every version.
//  2. Build one Settler per process: NewSettler(NewWindow(ttl, shards),
//     store, WithSink(sink)). ttl covers the retries you expect (the store
//     catches the rest); shards ~ 4x cores.
//  3. Call Apply(ctx, key, payload, now) for every arrival, with now from
//     your clock. On err == nil ack the sender (Result says whether this call
//     was the first); on err != nil do not ack: the sender retries.
//  4. Call Recover(ctx, now) when the process starts and periodically, on any
//     node: it completes grants whose owner died (lease ended).
//  5. Make the Sink idempotent by key, ideally in the same transaction as the
//     balance it changes (ref/sqlite, ref/postgres do).
//
// The seed (source 000's Go code) keeps its API here, so its tests compile
// unchanged: Settle is the seed form (the caller delivers), SeedStore is the
// seed's Store interface and FromSeedStore adapts one. Where the Settler
// departs from the seed, each with a test that fails on the seed's
// behaviour (DESIGN.md, "Reference Settler"): the window is marked only
// after the effect is durable, Granted records are completed (by the next
// retry or Recover, through the Sink), stores return errors with a stated
// contract (Store), and keys are 128 bits with unambiguous field boundaries
// (KeyOf).
type Settler struct {
	win   Memory
	store Store
	sink  Sink
	lease time.Duration
	// sinkCommits: the sink's Deliver also commits StateDelivered (a
	// CommittingSink), so Apply skips its Commit.
	sinkCommits bool
	stats       counters
}

// Option configures a Settler.
type Option func(*Settler)

// WithSink makes the Settler own delivery: Apply claims the key, delivers the
// effect through sink, then commits StateDelivered.
func WithSink(sink Sink) Option { return func(s *Settler) { s.sink = sink } }

// WithLease sets how long a claim is presumed owned by the node that made it
// (Claim.LeaseUntil = now + d). Recover on any node completes only records
// whose lease ended. Pick it above the slowest Begin->Sink->Commit you expect
// (default 30s: far above a database round trip, short enough that a dead
// node's grants complete within a minute).
func WithLease(d time.Duration) Option {
	if d < 0 {
		panic(fmt.Sprintf("ref.WithLease: lease must be >= 0, got %v", d))
	}
	return func(s *Settler) { s.lease = d }
}

// DefaultLease is the lease WithLease documents.
const DefaultLease = 30 * time.Second

// ErrNoSink: Apply or Recover on a Settler built without WithSink.
var ErrNoSink = errors.New("ref: settler has no sink (use WithSink)")

// Memory is the Settler's first layer: what it remembers in process of the
// keys whose effect is durable, so the common retry needs no store round
// trip. Window is one; any cache can be, under this contract:
//
//   - Put(fp, val, now) records that the key with fingerprint fp and other
//     64 bits val is durable. The Settler calls it only after the effect is
//     durable, never before.
//   - Lookup(fp, now) returns the val last Put for fp, if it still holds it.
//     It may forget an entry at any time (the store catches what the memory
//     forgot: a round trip, never a wrong answer), but it must not return a
//     val that was never Put for fp: the Settler acks such a hit as
//     "already delivered".
//
// The Settler compares val with the key's other 64 bits, so two keys that
// share a fingerprint never answer for each other.
type Memory interface {
	Lookup(fp uint64, now time.Time) (val uint64, ok bool)
	Put(fp, val uint64, now time.Time) (prev uint64, existed bool)
}

var _ Memory = (*Window)(nil)

// NewSettler builds a settler from a window and a store. Without WithSink it
// is the seed's settler: Settle reports fresh and the caller delivers.
func NewSettler(win *Window, store Store, opts ...Option) *Settler {
	if win == nil {
		panic("ref.NewSettler: window must not be nil")
	}
	return NewSettlerOn(win, store, opts...)
}

// NewSettlerOn builds a settler whose first layer is mem instead of a
// Window: a cache of your own, under Memory's contract. Everything else is
// NewSettler's.
func NewSettlerOn(mem Memory, store Store, opts ...Option) *Settler {
	if mem == nil || store == nil {
		panic("ref.NewSettler: window and store must not be nil")
	}
	s := &Settler{win: mem, store: store, lease: DefaultLease}
	for _, o := range opts {
		o(s)
	}
	if cs, ok := s.sink.(CommittingSink); ok && cs.CommitsRecord() {
		s.sinkCommits = true
	}
	return s
}

// Layer says which layer decided a result.
type Layer uint8

const (
	LayerNone   Layer = iota // nothing caught it: this call granted it
	LayerWindow              // the in-memory window
	LayerStore               // the durable constraint
)

func (l Layer) String() string {
	switch l {
	case LayerNone:
		return "none"
	case LayerWindow:
		return "window"
	case LayerStore:
		return "store"
	}
	return fmt.Sprintf("Layer(%d)", uint8(l))
}

// Result is what Apply did.
type Result struct {
	// State is StateDelivered whenever err == nil: the effect is durable in
	// the sink, so the caller may ack.
	State State
	// Fresh is true when this call claimed the key (first sight anywhere).
	Fresh bool
	// Caught says which layer recognised a duplicate (LayerNone when Fresh).
	Caught Layer
}

// Apply settles the request with durable identity key, delivering payload
// through the sink exactly once. On err == nil the effect is durable and the
// caller acks (Result says whether this call was the first). On err != nil
// nothing is acked and the sender must retry: the window remembers nothing,
// and whatever the store recorded is completed by the retry or by Recover.
func (s *Settler) Apply(ctx context.Context, key Key, payload []byte, now time.Time) (Result, error) {
	if s.sink == nil {
		return Result{}, ErrNoSink
	}
	fp := key.Fingerprint()
	// Layer 1: the window holds only keys whose effect is durable (it is
	// marked after Commit), so a hit is an honest "already delivered". Its
	// value is the key's other 64 bits: a 64-bit collision is not a hit.
	if v, ok := s.win.Lookup(uint64(fp), now); ok {
		if v == key.Lo {
			s.stats.add(fp, cWindowDup)
			return Result{State: StateDelivered, Caught: LayerWindow}, nil
		}
		s.stats.add(fp, cCollisions)
	}
	// Layer 2: the durable unique constraint.
	st, created, err := s.store.Begin(ctx, Claim{Key: key, Payload: payload, LeaseUntil: now.Add(s.lease)})
	if err != nil {
		s.stats.add(fp, cErrors)
		return Result{}, fmt.Errorf("ref: claim %v: %w", key, err)
	}
	res := Result{State: StateDelivered, Fresh: created, Caught: LayerNone}
	switch {
	case created:
		// Layer 3: we own the grant.
	case st == StateDelivered:
		s.stats.add(fp, cStoreDup)
		s.win.Put(uint64(fp), key.Lo, now)
		res.Caught = LayerStore
		return res, nil
	default:
		// StateGranted with someone else's (or a dead node's, or our own
		// earlier timed-out) claim. Completing it through the idempotent sink
		// is safe whoever else is doing the same: the sink applies the key
		// once. Never run a second grant: only this keyed delivery.
		res.Caught = LayerStore
	}
	if err := s.sink.Deliver(ctx, key, payload); err != nil {
		s.stats.add(fp, cErrors)
		return Result{}, fmt.Errorf("ref: deliver %v: %w", key, err)
	}
	if !s.sinkCommits {
		if err := s.store.Commit(ctx, key, StateDelivered); err != nil {
			s.stats.add(fp, cErrors)
			return Result{}, fmt.Errorf("ref: commit %v: %w", key, err)
		}
	}
	s.win.Put(uint64(fp), key.Lo, now)
	if created {
		s.stats.add(fp, cGranted)
	} else {
		s.stats.add(fp, cStoreDup)
		s.stats.add(fp, cCompleted)
	}
	return res, nil
}

// Settle is the seed's form: it claims fp and reports fresh=true when this
// call granted it, in which case the caller delivers the effect. fresh=false
// means a duplicate (state StateDelivered, or StateGranted while another call
// still holds the grant), or, with state StateNew, that the store failed and
// the sender must retry.
//
// Settle cannot make delivery exactly-once: it commits StateDelivered before
// the caller delivers, so a crash in between loses the effect. Use Apply with
// WithSink for that. Its durable key is the 64-bit fp (see Fingerprint for
// what that risks); do not mix Settle and Apply on one store.
func (s *Settler) Settle(fp Fingerprint, now time.Time) (st State, fresh bool) {
	key := fp.Key()
	if v, ok := s.win.Lookup(uint64(fp), now); ok && v == key.Lo {
		s.stats.add(fp, cWindowDup)
		return StateDelivered, false
	}
	ctx := context.Background()
	claim := Claim{Key: key, LeaseUntil: now.Add(s.lease)}
	var (
		cur     State
		created bool
		err     error
	)
	dc, oneStep := s.store.(DeliveredClaimer)
	if oneStep {
		// One round trip: the record is born Delivered, as the two-step path
		// leaves it a moment later.
		cur, created, err = dc.BeginDelivered(ctx, claim)
	} else {
		cur, created, err = s.store.Begin(ctx, claim)
	}
	if err != nil {
		s.stats.add(fp, cErrors)
		return StateNew, false
	}
	if !created {
		s.stats.add(fp, cStoreDup)
		if cur == StateDelivered {
			s.win.Put(uint64(fp), key.Lo, now)
		}
		return cur, false
	}
	if !oneStep {
		// The caller delivers; if this Commit fails the record stays Granted
		// and still blocks every later claim, so the grant is never repeated.
		if err := s.store.Commit(ctx, key, StateDelivered); err != nil {
			s.stats.add(fp, cErrors)
			s.stats.add(fp, cGranted)
			return StateGranted, true
		}
	}
	s.win.Put(uint64(fp), key.Lo, now)
	s.stats.add(fp, cGranted)
	return StateDelivered, true
}

// Stats returns a snapshot of the counters. Counting uses striped atomics, so
// it adds no lock to the hot path.
func (s *Settler) Stats() SettlerStats { return s.stats.snapshot() }

// Memory returns the settler's first layer (a *Window unless it was built
// with NewSettlerOn).
func (s *Settler) Memory() Memory { return s.win }
