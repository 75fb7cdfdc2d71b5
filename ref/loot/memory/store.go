package memory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Store is an in-process loot.Store. One mutex makes every method one
// atomic step, which is what the contract asks of a SQL transaction. It
// never fails except on a cancelled context or a bad argument.
type Store struct {
	mu       sync.Mutex
	now      func() time.Time
	sessions map[string]*loot.Session
	claims   map[string]map[loot.PlayerID]loot.Claim
	grants   map[string]*loot.Grant // by grant number
	byRank   map[string][]string    // session -> grant numbers in rank order
	snaps    map[string]loot.Snapshot
	applied  map[string]int  // inventory ledger: grant number -> applications
	holdings map[holding]int // inventory: items per player and loot code
}

type holding struct {
	player loot.PlayerID
	loot   string
}

var _ loot.Store = (*Store)(nil)
var _ loot.BatchMarker = (*Store)(nil)

// NewStore returns an empty store whose clock (the "database's") is now.
// Pass a Clock's Now in tests; time.Now in a process that uses the store
// for real.
func NewStore(now func() time.Time) *Store {
	if now == nil {
		panic("memory.NewStore: nil clock")
	}
	return &Store{
		now: now, sessions: map[string]*loot.Session{}, claims: map[string]map[loot.PlayerID]loot.Claim{},
		grants: map[string]*loot.Grant{}, byRank: map[string][]string{}, snaps: map[string]loot.Snapshot{},
		applied: map[string]int{}, holdings: map[holding]int{},
	}
}

// enter checks ctx, locks the store and reads its clock once: the "now" of
// the call, as a SQL statement reads NOW(6) once.
func (s *Store) enter(ctx context.Context) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("memory: %w", err)
	}
	s.mu.Lock()
	return loot.StoreTime(s.now()), nil
}

// Open implements loot.Store.
func (s *Store) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return loot.Session{}, false, err
	}
	now, err := s.enter(ctx)
	if err != nil {
		return loot.Session{}, false, err
	}
	defer s.mu.Unlock()
	if sess, ok := s.sessions[spec.No]; ok {
		return copySession(sess), false, nil
	}
	if err := loot.CheckOpen(spec, now); err != nil {
		return loot.Session{}, false, err
	}
	sess := &loot.Session{Spec: spec, Status: loot.StatusOpen, OpenedAt: now}
	s.sessions[spec.No] = sess
	return copySession(sess), true, nil
}

// StartClaiming implements loot.Store.
func (s *Store) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	return inSession(s, ctx, no, func(sess *loot.Session, _ time.Time) (loot.Session, error) {
		apply, err := loot.CheckStart(*sess)
		if apply {
			sess.Status = loot.StatusClaiming
		}
		return copySession(sess), err
	})
}

// Cancel implements loot.Store.
func (s *Store) Cancel(ctx context.Context, no string) (loot.Session, error) {
	return inSession(s, ctx, no, func(sess *loot.Session, _ time.Time) (loot.Session, error) {
		apply, err := loot.CheckCancel(*sess)
		if apply {
			sess.Status = loot.StatusCanceled
		}
		return copySession(sess), err
	})
}

// inSession runs f on session no under the store's lock with the call's
// now: one atomic step, as one SQL transaction is. ErrNotFound if there is
// no such session.
func inSession[T any](s *Store, ctx context.Context, no string, f func(sess *loot.Session, now time.Time) (T, error)) (T, error) {
	var zero T
	now, err := s.enter(ctx)
	if err != nil {
		return zero, err
	}
	defer s.mu.Unlock()
	sess, ok := s.sessions[no]
	if !ok {
		return zero, fmt.Errorf("memory: session %q: %w", no, loot.ErrNotFound)
	}
	return f(sess, now)
}

// claimed is what Claim answers.
type claimed struct {
	c       loot.Claim
	created bool
}

// Claim implements loot.Store.
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if !in.Valid() {
		return loot.Claim{}, false, fmt.Errorf("memory: intent %q: %w", in, loot.ErrBadArgument)
	}
	r, err := inSession(s, ctx, no, func(sess *loot.Session, now time.Time) (claimed, error) {
		if err := loot.CheckClaim(*sess, p, now); err != nil {
			return claimed{}, err
		}
		cs := s.claims[no]
		if cs == nil {
			cs = map[loot.PlayerID]loot.Claim{}
			s.claims[no] = cs
		}
		c, existed := cs[p]
		if existed && c.Intent == in {
			return claimed{c, false}, nil
		}
		c = loot.Claim{Session: no, Player: p, Intent: in, At: now}
		cs[p] = c
		return claimed{c, !existed}, nil
	})
	return r.c, r.created, err
}

// BeginSettle implements loot.Store.
func (s *Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, fmt.Errorf("memory: settle lease %v: %w", lease, loot.ErrBadArgument)
	}
	return inSession(s, ctx, no, func(sess *loot.Session, now time.Time) (loot.Frozen, error) {
		if err := loot.CheckSettle(*sess, now); err != nil {
			return loot.Frozen{}, err
		}
		sess.Status = loot.StatusSettling
		sess.Fence++
		sess.SettleUntil = loot.StoreTime(now.Add(lease))
		return loot.Frozen{Session: copySession(sess), Claims: s.claimsOf(no)}, nil
	})
}

// RecordGrants implements loot.Store.
func (s *Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	return inSession(s, ctx, d.Session, func(sess *loot.Session, now time.Time) (loot.Session, error) {
		apply, err := loot.CheckRecord(*sess, d.Fence)
		if err != nil || !apply {
			return copySession(sess), err
		}
		if err := s.checkDecision(d); err != nil {
			return copySession(sess), err
		}
		sess.Status = loot.StatusClosed
		sess.Allocated = len(d.Grants)
		lease := loot.StoreTime(now.Add(d.Lease))
		nos := make([]string, len(d.Grants))
		for i, g := range d.Grants {
			g.Status, g.Attempts, g.LeaseUntil = loot.GrantPending, 0, lease
			s.grants[g.No] = &g
			nos[i] = g.No
		}
		s.byRank[d.Session] = nos
		s.snaps[d.Session] = copySnapshot(d.Snapshot)
		return copySession(sess), nil
	})
}

// checkDecision rejects what a unique index and the schema would (locked).
func (s *Store) checkDecision(d loot.Decision) error {
	if err := loot.CheckDecision(d); err != nil {
		return err
	}
	for _, g := range d.Grants {
		if s.grants[g.No] != nil {
			return fmt.Errorf("memory: decision for %q: grant number %q exists: %w", d.Session, g.No, loot.ErrBadArgument)
		}
	}
	return nil
}

// MarkDelivered implements loot.Store.
func (s *Store) MarkDelivered(ctx context.Context, grantNo string) (loot.Grant, error) {
	gs, err := s.MarkDeliveredBatch(ctx, []string{grantNo})
	if err != nil {
		return loot.Grant{}, err
	}
	return gs[0], nil
}

// MarkDeliveredBatch implements loot.BatchMarker under one hold of the
// lock; a number not recorded is ErrNotFound and nothing is marked.
func (s *Store) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	if _, err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	for _, no := range nos {
		if _, ok := s.grants[no]; !ok {
			return nil, fmt.Errorf("memory: grant %q: %w", no, loot.ErrNotFound)
		}
	}
	out := make([]loot.Grant, len(nos))
	for i, no := range nos {
		g := s.grants[no]
		g.Status = loot.GrantSuccess
		out[i] = *g
	}
	return out, nil
}

// LeaseGrants implements loot.Store.
func (s *Store) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	if b.Base <= 0 || b.Max < b.Base || limit < 0 {
		return nil, fmt.Errorf("memory: lease grants: limit %d, backoff %v..%v: %w", limit, b.Base, b.Max, loot.ErrBadArgument)
	}
	now, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var due []*loot.Grant
	for _, g := range s.grants {
		if g.Status == loot.GrantPending && !g.LeaseUntil.After(now) {
			due = append(due, g)
		}
	}
	slices.SortFunc(due, func(a, b *loot.Grant) int {
		return cmp.Or(a.LeaseUntil.Compare(b.LeaseUntil), cmp.Compare(a.No, b.No))
	})
	out := make([]loot.Grant, 0, min(limit, len(due)))
	for _, g := range due[:min(limit, len(due))] {
		g.Attempts++
		g.LeaseUntil = loot.StoreTime(now.Add(b.Lease(g.Attempts)))
		out = append(out, *g)
	}
	return out, nil
}

// Overdue implements loot.Store.
func (s *Store) Overdue(ctx context.Context, limit int) ([]string, error) {
	now, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	type due struct {
		no string
		at time.Time
	}
	var ds []due
	for no, sess := range s.sessions {
		if at, ok := loot.DueSince(*sess, now); ok {
			ds = append(ds, due{no, at})
		}
	}
	slices.SortFunc(ds, func(a, b due) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.no, b.no)) })
	n := min(max(limit, 0), len(ds))
	out := make([]string, n)
	for i, d := range ds[:n] {
		out[i] = d.no
	}
	return out, nil
}

// Session implements loot.Reader.
func (s *Store) Session(ctx context.Context, no string) (loot.Session, error) {
	return inSession(s, ctx, no, func(sess *loot.Session, _ time.Time) (loot.Session, error) {
		return copySession(sess), nil
	})
}

// Claims implements loot.Reader.
func (s *Store) Claims(ctx context.Context, no string) ([]loot.Claim, error) {
	return inSession(s, ctx, no, func(*loot.Session, time.Time) ([]loot.Claim, error) {
		return s.claimsOf(no), nil
	})
}

// claimsOf returns session no's claims sorted by player (locked).
func (s *Store) claimsOf(no string) []loot.Claim {
	cs := slices.Collect(maps.Values(s.claims[no]))
	slices.SortFunc(cs, func(a, b loot.Claim) int { return cmp.Compare(a.Player, b.Player) })
	return cs
}

// Grants implements loot.Reader.
func (s *Store) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	return inSession(s, ctx, no, func(*loot.Session, time.Time) ([]loot.Grant, error) {
		out := make([]loot.Grant, 0, len(s.byRank[no]))
		for _, gno := range s.byRank[no] {
			out = append(out, *s.grants[gno])
		}
		return out, nil
	})
}

// Snapshot implements loot.Reader.
func (s *Store) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	return inSession(s, ctx, no, func(sess *loot.Session, _ time.Time) (loot.Snapshot, error) {
		switch sess.Status {
		case loot.StatusClosed:
			return copySnapshot(s.snaps[no]), nil
		case loot.StatusCanceled:
			return loot.Snapshot{}, fmt.Errorf("memory: snapshot of %q: %w", no, loot.ErrCanceled)
		}
		return loot.Snapshot{}, fmt.Errorf("memory: snapshot of %q (%s): %w", no, sess.Status, loot.ErrNotDue)
	})
}

func copySession(s *loot.Session) loot.Session {
	c := *s
	c.Members = slices.Clone(s.Members)
	return c
}

func copySnapshot(s loot.Snapshot) loot.Snapshot {
	s.Members = slices.Clone(s.Members)
	s.Claims = slices.Clone(s.Claims)
	s.Winners = slices.Clone(s.Winners)
	return s
}

// List implements loot.Lister.
func (s *Store) List(ctx context.Context, q loot.ListQuery) ([]loot.Session, error) {
	if _, err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []loot.Session
	for _, sess := range s.sessions {
		if q.Match(*sess) {
			out = append(out, copySession(sess))
		}
	}
	slices.SortFunc(out, func(a, b loot.Session) int { return cmp.Or(a.Deadline.Compare(b.Deadline), cmp.Compare(a.No, b.No)) })
	return out[:min(max(q.Limit, 0), len(out))], nil
}
