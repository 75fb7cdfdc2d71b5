package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref/loot"
)

// The session-row writes: each is one batch (one round trip, one implicit
// transaction) of the conditional write and the read of the row after it.
// When the write matched, the read is the result; when it did not, the
// read is the state the guard (loot.Check*) explains the refusal by, with
// the call's now.

// send queues statements on one batch, sends it and reads the results.
func (s *Store) send(ctx context.Context, queue func(*pgx.Batch), read func(pgx.BatchResults) error) error {
	b := &pgx.Batch{}
	queue(b)
	br := s.pool.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// after is the session as read after a write in the same batch.
type after struct {
	applied bool // the write matched its row
	found   bool // the session exists
	sess    loot.Session
	now     time.Time
}

// readAfter reads the session row queued after a write.
func readAfter(br pgx.BatchResults, a *after) error {
	var err error
	a.sess, err = scanSession(br.QueryRow(), &a.now)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return err
	}
	a.found = true
	return nil
}

// update runs a conditional UPDATE of session no and reads the row after it.
func (s *Store) update(ctx context.Context, write string, no string, args ...any) (after, error) {
	var a after
	err := s.send(ctx, func(b *pgx.Batch) {
		b.Queue(write, append([]any{no}, args...)...)
		b.Queue(s.q.readSession, no)
	}, func(br pgx.BatchResults) error {
		tag, err := br.Exec()
		if err != nil {
			return err
		}
		a.applied = tag.RowsAffected() == 1
		return readAfter(br, &a)
	})
	return a, err
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
	r, err := retry(ctx, "open "+spec.No, func() (opened, error) {
		var a after
		err := s.send(ctx, func(b *pgx.Batch) {
			b.Queue(s.q.open, spec.No, spec.Dungeon, spec.Loot, spec.Quantity, string(spec.Rule), spec.Deadline, playerIDs(spec.Members))
			b.Queue(s.q.readSession, spec.No)
			b.Queue(s.q.now)
		}, func(br pgx.BatchResults) error {
			var n int
			if err := br.QueryRow().Scan(&n); err != nil {
				return err
			}
			a.applied = n == 1
			if err := readAfter(br, &a); err != nil {
				return err
			}
			return br.QueryRow().Scan(&a.now) // for CheckOpen when there is no row
		})
		switch {
		case err != nil:
			return opened{}, wrap("open "+spec.No, badArgOnConstraint(err))
		case a.found:
			return opened{a.sess, a.applied}, nil
		}
		if err := loot.CheckOpen(spec, utc(a.now)); err != nil {
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
		a, err := s.update(ctx, write, no)
		switch {
		case err != nil:
			return loot.Session{}, wrap(op, err)
		case a.applied:
			return a.sess, nil
		case !a.found:
			return loot.Session{}, fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
		}
		apply, err := check(a.sess)
		if apply {
			return loot.Session{}, errRaced
		}
		return a.sess, err
	})
}

// BeginSettle implements loot.Store. The frozen claims are read by a third
// statement of the batch, after the UPDATE holds the row: a statement's
// snapshot is taken when it starts, so reading them in the UPDATE's own
// statement could miss a claim that committed while the UPDATE waited for
// its FOR SHARE lock.
func (s *Store) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	if lease <= 0 {
		return loot.Frozen{}, fmt.Errorf("loot/postgres: settle lease %v: %w", lease, loot.ErrBadArgument)
	}
	op := "begin settle " + no
	return retry(ctx, op, func() (loot.Frozen, error) {
		var (
			a  after
			cs []loot.Claim
		)
		err := s.send(ctx, func(b *pgx.Batch) {
			b.Queue(s.q.beginSettle, no, lease)
			b.Queue(s.q.readSession, no)
			b.Queue(s.q.claims, no)
		}, func(br pgx.BatchResults) error {
			tag, err := br.Exec()
			if err != nil {
				return err
			}
			a.applied = tag.RowsAffected() == 1
			if err := readAfter(br, &a); err != nil {
				return err
			}
			cs, err = readClaims(br, no)
			return err
		})
		switch {
		case err != nil:
			return loot.Frozen{}, wrap(op, err)
		case a.applied:
			return loot.Frozen{Session: a.sess, Claims: cs}, nil
		case !a.found:
			return loot.Frozen{}, fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
		}
		if err := loot.CheckSettle(a.sess, a.now); err != nil {
			return loot.Frozen{}, err
		}
		return loot.Frozen{}, errRaced
	})
}

// RecordGrants implements loot.Store: the close, the grants (one multi-row
// INSERT) and the snapshot are one statement.
func (s *Store) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	op := fmt.Sprintf("record grants of %s (fence %d)", d.Session, d.Fence)
	if err := checkDecision(d); err != nil {
		return loot.Session{}, err
	}
	claims, err := encodeClaims(d.Snapshot.Claims)
	if err != nil {
		return loot.Session{}, wrap(op, err)
	}
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
	snap := d.Snapshot
	args := []any{
		d.Fence, n, d.Lease, nos, players, loots, quantities, ranks,
		int64(snap.Fence), snap.Dungeon, snap.Loot, snap.Quantity, snap.Deadline, string(snap.Rule),
		playerIDs(snap.Members), claims, snap.ClaimsHash, playerIDs(snap.Winners),
	}
	return retry(ctx, op, func() (loot.Session, error) {
		var a after
		err := s.send(ctx, func(b *pgx.Batch) {
			b.Queue(s.q.record, append([]any{d.Session}, args...)...)
			b.Queue(s.q.readSession, d.Session)
		}, func(br pgx.BatchResults) error {
			var n int
			if err := br.QueryRow().Scan(&n); err != nil {
				return err
			}
			a.applied = n == 1
			return readAfter(br, &a)
		})
		switch {
		case err != nil:
			return loot.Session{}, wrap(op, badArgOnConstraint(err))
		case a.applied:
			return a.sess, nil
		case !a.found:
			return loot.Session{}, fmt.Errorf("loot/postgres: session %q: %w", d.Session, loot.ErrNotFound)
		}
		apply, err := loot.CheckRecord(a.sess, d.Fence)
		if apply {
			return loot.Session{}, errRaced
		}
		return a.sess, err
	})
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
