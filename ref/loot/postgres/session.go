package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref/loot"
)

// The session-row writes: each is one conditional statement that returns
// the row it wrote. When it matches no row, readSession reads the row and
// the clock in a second statement, and the guard (loot.Check*) explains the
// refusal by them.

// send queues statements on one batch (one round trip, one implicit
// transaction), sends it and reads the results.
func (s *Store) send(ctx context.Context, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	if err := live(ctx); err != nil {
		return err
	}
	b := &pgx.Batch{}
	queue(b)
	br := s.pool.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// readSession reads session no as it is now, with the database's now, for
// a guard to explain a write that matched nothing; found is false for no
// such session.
func (s *Store) readSession(ctx context.Context, no string) (sess loot.Session, now time.Time, found bool, err error) {
	err = s.send(ctx, func(b *pgx.Batch) {
		b.Queue(s.q.readSession, no)
		b.Queue(s.q.now)
	}, func(br pgx.BatchResults) error {
		sess, err = scanSession(br.QueryRow())
		switch {
		case err == nil:
			found = true
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		return br.QueryRow().Scan(&now)
	})
	return sess, utc(now), found, err
}

// written returns the session a conditional write returned, or, when it
// matched no row (wrote false), the session as it is and the database's
// now.
func (s *Store) written(ctx context.Context, no string, row pgx.Row) (sess loot.Session, wrote, found bool, now time.Time, err error) {
	sess, err = scanSession(row)
	switch {
	case err == nil:
		return sess, true, true, time.Time{}, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return loot.Session{}, false, false, time.Time{}, err
	}
	sess, now, found, err = s.readSession(ctx, no)
	return sess, false, found, now, err
}

func notFound(no string) error {
	return fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
}

// Open implements loot.Store.
func (s *Store) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return loot.Session{}, false, err
	}
	type opened struct {
		s       loot.Session
		created bool
	}
	op := "open " + spec.No
	r, err := retry(ctx, op, func() (opened, error) {
		row := s.pool.QueryRow(ctx, s.q.open, spec.No, spec.Dungeon, spec.Loot, spec.Quantity, string(spec.Rule), spec.Deadline, playerIDs(spec.Members))
		sess, wrote, found, now, err := s.written(ctx, spec.No, row)
		switch {
		case err != nil:
			return opened{}, wrap(op, badArgOnConstraint(err))
		case wrote || found:
			return opened{sess, wrote}, nil
		}
		if err := loot.CheckOpen(spec, now); err != nil {
			return opened{}, err
		}
		return opened{}, errRaced // inserted and gone? a concurrent Open rolled back
	})
	return r.s, r.created, err
}

// StartClaiming implements loot.Store.
func (s *Store) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	return s.transition(ctx, "start claiming "+no, s.q.startClaiming, no, loot.CheckStart)
}

// Cancel implements loot.Store.
func (s *Store) Cancel(ctx context.Context, no string) (loot.Session, error) {
	return s.transition(ctx, "cancel "+no, s.q.cancel, no, loot.CheckCancel)
}

// transition runs a status write whose guard depends on the row alone.
func (s *Store) transition(ctx context.Context, op, write, no string, check func(loot.Session) (bool, error)) (loot.Session, error) {
	return retry(ctx, op, func() (loot.Session, error) {
		sess, wrote, found, _, err := s.written(ctx, no, s.pool.QueryRow(ctx, write, no))
		switch {
		case err != nil:
			return loot.Session{}, wrap(op, err)
		case wrote:
			return sess, nil
		case !found:
			return loot.Session{}, notFound(no)
		}
		apply, err := check(sess)
		if apply {
			return loot.Session{}, errRaced
		}
		return sess, err
	})
}

// BeginSettle implements loot.Store: one batch of the CAS and the read of
// the frozen claims (with Options.Batch, one such batch for many callers:
// batch.go). The claims are read by a statement of their own, after the
// UPDATE holds the row: a statement's snapshot is taken when it starts, so
// reading them in the UPDATE's own statement could miss a claim that
// committed while the UPDATE waited for its FOR SHARE lock.
func (s *Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, fmt.Errorf("loot/postgres: settle lease %v: %w", lease, loot.ErrBadArgument)
	}
	if s.settles != nil {
		// A number the batch's statement refuses would fail the others'
		// settles with it: refuse it alone.
		if err := loot.CheckSessionNo(no); err != nil {
			return loot.Frozen{}, fmt.Errorf("loot/postgres: begin settle: %w", err)
		}
	}
	op := "begin settle " + no
	return retry(ctx, op, func() (loot.Frozen, error) {
		alone := func() (loot.Frozen, error) { return s.beginOne(ctx, op, no, lease) }
		if s.settles != nil {
			return laneDo(ctx, s.settles, settleReq{no, lease}, alone)
		}
		return alone()
	})
}

// beginOne is one attempt of BeginSettle on its own.
func (s *Store) beginOne(ctx context.Context, op, no string, lease time.Duration) (loot.Frozen, error) {
	var (
		fz    loot.Frozen
		wrote bool
	)
	err := s.send(ctx, func(b *pgx.Batch) {
		b.Queue(s.q.beginSettle, no, lease)
		b.Queue(s.q.claims, no)
	}, func(br pgx.BatchResults) error {
		var err error
		fz.Session, err = scanSession(br.QueryRow())
		switch {
		case err == nil:
			wrote = true
		case !errors.Is(err, pgx.ErrNoRows):
			return err
		}
		fz.Claims, err = readClaims(br, no)
		if errors.Is(err, loot.ErrNotFound) {
			err = nil // the session's absence is told below
		}
		return err
	})
	switch {
	case err != nil:
		return loot.Frozen{}, wrap(op, err)
	case wrote:
		return fz, nil
	}
	sess, now, found, err := s.readSession(ctx, no)
	switch {
	case err != nil:
		return loot.Frozen{}, wrap(op, err)
	case !found:
		return loot.Frozen{}, notFound(no)
	}
	if err := loot.CheckSettle(sess, now); err != nil {
		return loot.Frozen{}, err
	}
	return loot.Frozen{}, errRaced
}

// RecordGrants implements loot.Store: the close, the grants (one multi-row
// INSERT) and the snapshot are one statement (with Options.Batch, one
// statement for many callers' decisions: batch.go).
func (s *Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	op := fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence)
	if err := checkDecision(d); err != nil {
		return loot.Session{}, err
	}
	claims, err := encodeClaims(d.Snapshot.Claims)
	if err != nil {
		return loot.Session{}, wrap(op, err)
	}
	req := recordReq{d: d, claims: claims}
	return retry(ctx, op, func() (loot.Session, error) {
		alone := func() (loot.Session, error) { return s.recordOne(ctx, req) }
		if s.records != nil {
			return laneDo(ctx, s.records, req, alone)
		}
		return alone()
	})
}

// recordOne is one attempt of RecordGrants on its own.
func (s *Store) recordOne(ctx context.Context, r recordReq) (loot.Session, error) {
	d, snap := r.d, r.d.Snapshot
	op := fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence)
	n := len(d.Grants)
	var (
		nos, loots        = make([]string, n), make([]string, n)
		players           = make([]int64, n)
		quantities, ranks = make([]int32, n), make([]int32, n)
	)
	for i, g := range d.Grants {
		nos[i], loots[i], players[i] = g.No, g.Loot, int64(g.Player)
		quantities[i], ranks[i] = int32(g.Quantity), int32(g.Rank)
	}
	row := s.pool.QueryRow(ctx, s.q.record, d.Session, d.Fence, n, d.Lease, nos, players, loots, quantities, ranks,
		int64(snap.Fence), snap.Dungeon, snap.Loot, snap.Quantity, snap.Deadline, string(snap.Rule),
		playerIDs(snap.Members), r.claims, snap.ClaimsHash, playerIDs(snap.Winners))
	sess, wrote, found, _, err := s.written(ctx, d.Session, row)
	switch {
	case err != nil:
		return loot.Session{}, wrap(op, badArgOnConstraint(err))
	case wrote:
		return sess, nil
	case !found:
		return loot.Session{}, notFound(d.Session)
	}
	apply, err := loot.CheckRecord(sess, d.Fence)
	if apply {
		return loot.Session{}, errRaced
	}
	return sess, err
}

// checkDecision refuses what the schema cannot see: a grant or snapshot of
// another session (the statement writes every row under d.Session). A
// repeated grant number or rank, or a winner outside the team, is refused
// by the schema's keys inside the statement.
func checkDecision(d loot.Decision) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("loot/postgres: decision for %q: %s: %w", d.Session, fmt.Sprintf(format, args...), loot.ErrBadArgument)
	}
	if d.Lease < 0 {
		return bad("lease %v", d.Lease)
	}
	if d.Snapshot.Session != d.Session {
		return bad("snapshot of session %q", d.Snapshot.Session)
	}
	for _, g := range d.Grants {
		if g.Session != d.Session {
			return bad("grant %q of session %q", g.No, g.Session)
		}
	}
	return nil
}
