// Package table is the database of the loot shortcut rows: ref/loot's
// Store contract over in-memory tables (sessions with their members,
// claims, grants, snapshots), every status change a conditional write
// whose guard is ref/loot's own (loot.CheckStart, CheckClaim, ...), and
// Rules, one switch per rule a shortcut breaks. With no rule broken it
// passes ref/loot/loottest (table_test.go), so a shortcut row differs from
// the reference by its one switch.
package table

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot"
)

// Rules are the rules a shortcut breaks; the zero value breaks none.
type Rules struct {
	// SelectThenUpdate: the settle CAS becomes a read judged by the
	// application, then an unconditional write (two statements).
	SelectThenUpdate bool
	// NoCAS: the settle writes SETTLING without judging the row at all and
	// the record closes the session whatever its status and fence: the
	// lock is the only guard.
	NoCAS bool
	// NoDeadlineInCAS: the settle CAS does not judge the deadline.
	NoDeadlineInCAS bool
	// ClosedBeforeGrants: the record closes the session (with its snapshot)
	// in one statement and inserts the grants in a second.
	ClosedBeforeGrants bool
	// CheckThenClaim: a claim is judged by a read, then written by an
	// unconditional upsert (two statements).
	CheckThenClaim bool
	// NoMembership: a claim is not judged against the team snapshot.
	NoMembership bool
	// RowOrder: the settle CAS hands back the frozen claims in the order
	// their rows were inserted (a SELECT without ORDER BY), not by player.
	RowOrder bool
}

// DB is one cluster's tables, behind one mutex: each step of a Store is
// one atomic statement on them. now is the database's clock.
type DB struct {
	mu       sync.Mutex
	now      func() time.Time
	sessions map[string]*loot.Session
	claims   map[string]map[loot.PlayerID]loot.Claim
	inserted map[string][]loot.PlayerID // per session: claimants in row order
	grants   map[string]*loot.Grant
	byRank   map[string][]string
	snaps    map[string]loot.Snapshot
}

// NewDB returns empty tables on the database's clock now.
func NewDB(now func() time.Time) *DB {
	return &DB{now: now, sessions: map[string]*loot.Session{}, claims: map[string]map[loot.PlayerID]loot.Claim{},
		inserted: map[string][]loot.PlayerID{}, grants: map[string]*loot.Grant{}, byRank: map[string][]string{}, snaps: map[string]loot.Snapshot{}}
}

// Store is a loot.Store on db: every statement one Env.Store call (or a
// direct call with a nil Env), breaking Rules. Clock, if set, is the
// clock deadlines are judged by instead of the database's (the
// application's: app-clock-deadline).
type Store struct {
	DB    *DB
	Env   lootfaults.Env
	Rules Rules
	Clock func() time.Time
}

var _ loot.Store = Store{}

// stmt runs f as one statement op on the tables, at the database's now;
// a cancelled context runs nothing.
func (s Store) stmt(ctx context.Context, op string, f func(now time.Time) error) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("table: %s: %w", op, err)
	}
	run := func() error {
		s.DB.mu.Lock()
		defer s.DB.mu.Unlock()
		return f(loot.StoreTime(s.DB.now()))
	}
	if s.Env == nil {
		return run()
	}
	return s.Env.Store(op, run)
}

// judged is the time a guard judges a deadline by.
func (s Store) judged(now time.Time) time.Time {
	if s.Clock != nil {
		return loot.StoreTime(s.Clock())
	}
	return now
}

// row is session no (ErrNotFound if none); the caller holds the lock.
func (db *DB) row(no string) (*loot.Session, error) {
	sess, ok := db.sessions[no]
	if !ok {
		return nil, fmt.Errorf("table: session %q: %w", no, loot.ErrNotFound)
	}
	return sess, nil
}

func copySession(s *loot.Session) loot.Session {
	out := *s
	out.Members = slices.Clone(s.Members)
	return out
}

// write is one status change of session no: guard judges the row, change
// writes it, in one statement; split makes it two (a read the application
// judges, then an unconditional write).
func (s Store) write(ctx context.Context, op, no string, split bool, guard func(sess loot.Session, now time.Time) (bool, error), change func(sess *loot.Session, now time.Time)) (loot.Session, error) {
	var out loot.Session
	apply := true
	judge := func(now time.Time) error {
		sess, err := s.DB.row(no)
		if err != nil {
			return err
		}
		out = copySession(sess)
		apply, err = guard(out, now)
		return err
	}
	set := func(now time.Time) error {
		sess, err := s.DB.row(no)
		if err != nil {
			return err
		}
		if apply {
			change(sess, now)
		}
		out = copySession(sess)
		return nil
	}
	if split {
		if err := s.stmt(ctx, "read-"+op, judge); err != nil {
			return out, err
		}
		return out, s.stmt(ctx, op, set)
	}
	return out, s.stmt(ctx, op, func(now time.Time) error {
		if err := judge(now); err != nil {
			return err
		}
		return set(now)
	})
}

// Open implements loot.Store.
func (s Store) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return loot.Session{}, false, err
	}
	var out loot.Session
	created := false
	err = s.stmt(ctx, "open", func(now time.Time) error {
		if sess, ok := s.DB.sessions[spec.No]; ok {
			out = copySession(sess)
			return nil
		}
		if err := loot.CheckOpen(spec, now); err != nil {
			return err
		}
		sess := &loot.Session{Spec: spec, Status: loot.StatusOpen, OpenedAt: now}
		s.DB.sessions[spec.No], out, created = sess, copySession(sess), true
		return nil
	})
	return out, created, err
}

// StartClaiming implements loot.Store.
func (s Store) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	return s.write(ctx, "start", no, false, func(sess loot.Session, _ time.Time) (bool, error) { return loot.CheckStart(sess) },
		func(sess *loot.Session, _ time.Time) { sess.Status = loot.StatusClaiming })
}

// Cancel implements loot.Store.
func (s Store) Cancel(ctx context.Context, no string) (loot.Session, error) {
	return s.write(ctx, "cancel", no, false, func(sess loot.Session, _ time.Time) (bool, error) { return loot.CheckCancel(sess) },
		func(sess *loot.Session, _ time.Time) { sess.Status = loot.StatusCanceled })
}

// Claim implements loot.Store.
func (s Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if !in.Valid() {
		return loot.Claim{}, false, fmt.Errorf("table: intent %q: %w", in, loot.ErrBadArgument)
	}
	guard := func(sess loot.Session, now time.Time) (bool, error) {
		if s.Rules.NoMembership && !sess.IsMember(p) {
			sess.Members = append(sess.Members, p)
			slices.Sort(sess.Members)
		}
		return true, loot.CheckClaim(sess, p, s.judged(now))
	}
	var c loot.Claim
	created := false
	upsert := func(_ *loot.Session, now time.Time) {
		cs := s.DB.claims[no]
		if cs == nil {
			cs = map[loot.PlayerID]loot.Claim{}
			s.DB.claims[no] = cs
		}
		old, existed := cs[p]
		if existed && old.Intent == in {
			c = old
			return
		}
		c, created = loot.Claim{Session: no, Player: p, Intent: in, At: now}, !existed
		cs[p] = c
		if created {
			s.DB.inserted[no] = append(s.DB.inserted[no], p)
		}
	}
	_, err := s.write(ctx, "claim", no, s.Rules.CheckThenClaim, guard, upsert)
	return c, created, err
}

// BeginSettle implements loot.Store.
func (s Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, fmt.Errorf("table: settle lease %v: %w", lease, loot.ErrBadArgument)
	}
	guard := func(sess loot.Session, now time.Time) (bool, error) {
		switch {
		case s.Rules.NoCAS:
			return true, nil
		case s.Rules.NoDeadlineInCAS && sess.Status == loot.StatusClaiming:
			sess.Deadline = time.Time{}
		}
		return true, loot.CheckSettle(sess, s.judged(now))
	}
	var claims []loot.Claim
	sess, err := s.write(ctx, "begin-settle", no, s.Rules.SelectThenUpdate, guard, func(sess *loot.Session, now time.Time) {
		sess.Status = loot.StatusSettling
		sess.Fence++
		sess.SettleUntil = loot.StoreTime(now.Add(lease))
		claims = s.DB.claimsOf(no)
		if s.Rules.RowOrder {
			claims = claims[:0]
			for _, p := range s.DB.inserted[no] {
				claims = append(claims, s.DB.claims[no][p])
			}
		}
	})
	return loot.Frozen{Session: sess, Claims: claims}, err
}

// claimsOf is session no's claims sorted by player (the lock held).
func (db *DB) claimsOf(no string) []loot.Claim {
	cs := make([]loot.Claim, 0, len(db.claims[no]))
	for _, c := range db.claims[no] {
		cs = append(cs, c)
	}
	slices.SortFunc(cs, func(a, b loot.Claim) int { return cmp.Compare(a.Player, b.Player) })
	return cs
}

// RecordGrants implements loot.Store.
func (s Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	guard := func(sess loot.Session, _ time.Time) (bool, error) {
		if s.Rules.NoCAS {
			return sess.Status != loot.StatusClosed || !s.DB.recorded(d), loot.CheckDecision(d)
		}
		apply, err := loot.CheckRecord(sess, d.Fence)
		if err == nil && apply {
			err = loot.CheckDecision(d)
		}
		return apply, err
	}
	closeIt := func(sess *loot.Session, now time.Time) {
		sess.Status, sess.Allocated = loot.StatusClosed, len(d.Grants)
		s.DB.snaps[d.Session] = d.Snapshot
	}
	insert := func(now time.Time) {
		lease := loot.StoreTime(now.Add(d.Lease))
		for _, g := range d.Grants {
			if s.DB.grants[g.No] != nil {
				continue // the unique key: a grant number is inserted once
			}
			g.Status, g.Attempts, g.LeaseUntil = loot.GrantPending, 0, lease
			s.DB.grants[g.No] = &g
			s.DB.byRank[d.Session] = append(s.DB.byRank[d.Session], g.No)
		}
	}
	if s.Rules.ClosedBeforeGrants {
		sess, err := s.write(ctx, "close", d.Session, false, guard, closeIt)
		if err != nil {
			return sess, err
		}
		return sess, s.stmt(ctx, "insert-grants", func(now time.Time) error { insert(now); return nil })
	}
	return s.write(ctx, "record", d.Session, false, guard, func(sess *loot.Session, now time.Time) {
		closeIt(sess, now)
		insert(now)
	})
}

// recorded reports whether every grant of d is on record (the lock held).
func (db *DB) recorded(d loot.Decision) bool {
	for _, g := range d.Grants {
		if db.grants[g.No] == nil {
			return false
		}
	}
	return true
}

// MarkDelivered implements loot.Store.
func (s Store) MarkDelivered(ctx context.Context, grantNo string) (loot.Grant, error) {
	var out loot.Grant
	err := s.stmt(ctx, "mark-delivered", func(time.Time) error {
		g, ok := s.DB.grants[grantNo]
		if !ok {
			return fmt.Errorf("table: grant %q: %w", grantNo, loot.ErrNotFound)
		}
		g.Status = loot.GrantSuccess
		out = *g
		return nil
	})
	return out, err
}

// LeaseGrants implements loot.Store.
func (s Store) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	if b.Base <= 0 || b.Max < b.Base || limit < 0 {
		return nil, fmt.Errorf("table: lease grants: limit %d, backoff %v..%v: %w", limit, b.Base, b.Max, loot.ErrBadArgument)
	}
	var out []loot.Grant
	err := s.stmt(ctx, "lease-grants", func(now time.Time) error {
		var due []*loot.Grant
		for _, g := range s.DB.grants {
			if g.Status == loot.GrantPending && !g.LeaseUntil.After(now) {
				due = append(due, g)
			}
		}
		slices.SortFunc(due, func(a, b *loot.Grant) int { return cmp.Or(a.LeaseUntil.Compare(b.LeaseUntil), cmp.Compare(a.No, b.No)) })
		for _, g := range due[:min(limit, len(due))] {
			g.Attempts++
			g.LeaseUntil = loot.StoreTime(now.Add(b.Lease(g.Attempts)))
			out = append(out, *g)
		}
		return nil
	})
	return out, err
}

// Overdue implements loot.Store.
func (s Store) Overdue(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := s.stmt(ctx, "overdue", func(now time.Time) error {
		type due struct {
			no string
			at time.Time
		}
		var ds []due
		for no, sess := range s.DB.sessions {
			if at, ok := loot.DueSince(*sess, now); ok {
				ds = append(ds, due{no, at})
			}
		}
		slices.SortFunc(ds, func(a, b due) int { return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.no, b.no)) })
		for _, d := range ds[:min(max(limit, 0), len(ds))] {
			out = append(out, d.no)
		}
		return nil
	})
	return out, err
}

// Session implements loot.Reader.
func (s Store) Session(ctx context.Context, no string) (loot.Session, error) {
	var out loot.Session
	err := s.stmt(ctx, "read-session", func(time.Time) error {
		sess, err := s.DB.row(no)
		if err == nil {
			out = copySession(sess)
		}
		return err
	})
	return out, err
}

// Claims implements loot.Reader.
func (s Store) Claims(ctx context.Context, no string) ([]loot.Claim, error) {
	var out []loot.Claim
	err := s.stmt(ctx, "read-claims", func(time.Time) error {
		if _, err := s.DB.row(no); err != nil {
			return err
		}
		out = s.DB.claimsOf(no)
		return nil
	})
	return out, err
}

// Grants implements loot.Reader.
func (s Store) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	var out []loot.Grant
	err := s.stmt(ctx, "read-grants", func(time.Time) error {
		if _, err := s.DB.row(no); err != nil {
			return err
		}
		for _, g := range s.DB.byRank[no] {
			out = append(out, *s.DB.grants[g])
		}
		return nil
	})
	return out, err
}

// Snapshot implements loot.Reader.
func (s Store) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	var out loot.Snapshot
	err := s.stmt(ctx, "read-snapshot", func(time.Time) error {
		sess, err := s.DB.row(no)
		switch {
		case err != nil:
			return err
		case sess.Status == loot.StatusCanceled:
			return fmt.Errorf("table: session %q: %w", no, loot.ErrCanceled)
		}
		snap, ok := s.DB.snaps[no]
		if !ok {
			return fmt.Errorf("table: session %q has no result yet: %w", no, loot.ErrNotDue)
		}
		out = snap
		return nil
	})
	return out, err
}
