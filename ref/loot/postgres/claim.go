package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref/loot"
)

// Claim implements loot.Store: one statement, the guarded INSERT ... ON
// CONFLICT DO UPDATE and, when it writes nothing, the read that tells a
// refusal from an identical repeat (see queries.claim).
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if !in.Valid() {
		return loot.Claim{}, false, fmt.Errorf("loot/postgres: intent %q: %w", in, loot.ErrBadArgument)
	}
	type claimed struct {
		c       loot.Claim
		created bool
	}
	op := fmt.Sprintf("claim %s by %d", no, p)
	r, err := retry(ctx, op, func() (claimed, error) {
		var (
			at, deadline, priorAt *time.Time
			created, member       *bool
			status, prior         *string
			fence                 *int64
			now                   time.Time
		)
		err := s.pool.QueryRow(ctx, s.q.claim, no, int64(p), string(in)).
			Scan(&at, &created, &status, &deadline, &fence, &member, &prior, &priorAt, &now)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return claimed{}, notFound(no)
		case err != nil:
			return claimed{}, wrap(op, err)
		case at != nil:
			return claimed{c: loot.Claim{Session: no, Player: p, Intent: in, At: utc(*at)}, created: *created}, nil
		}
		// Nothing written: refused, or an identical repeat. Tell which.
		st := loot.Session{Spec: loot.Spec{No: no, Deadline: utc(*deadline)}, Status: loot.Status(*status), Fence: loot.Fence(*fence)}
		if *member {
			st.Members = []loot.PlayerID{p}
		}
		if err := loot.CheckClaim(st, p, utc(now)); err != nil {
			return claimed{}, err
		}
		if prior != nil && loot.Intent(*prior) == in {
			return claimed{c: loot.Claim{Session: no, Player: p, Intent: in, At: utc(*priorAt)}}, nil
		}
		return claimed{}, errRaced
	})
	return r.c, r.created, err
}

// Claims implements loot.Reader.
func (s *Store) Claims(ctx context.Context, no string) ([]loot.Claim, error) {
	var cs []loot.Claim
	err := s.send(ctx, func(b *pgx.Batch) { b.Queue(s.q.claims, no) }, func(br pgx.BatchResults) error {
		var err error
		cs, err = readClaims(br, no)
		return err
	})
	if err != nil && !errors.Is(err, loot.ErrNotFound) {
		err = wrap("claims of "+no, err)
	}
	return cs, err
}

// readClaims reads the result of queries.claims: one row per claim sorted
// by player, one row of NULLs for a session without claims, none for no
// session (loot.ErrNotFound).
func readClaims(br pgx.BatchResults, no string) ([]loot.Claim, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := false
	cs := []loot.Claim{}
	for rows.Next() {
		found = true
		var (
			player *int64
			intent *string
			at     *time.Time
		)
		if err := rows.Scan(&player, &intent, &at); err != nil {
			return nil, err
		}
		if player != nil {
			cs = append(cs, loot.Claim{Session: no, Player: loot.PlayerID(*player), Intent: loot.Intent(*intent), At: utc(*at)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("loot/postgres: session %q: %w", no, loot.ErrNotFound)
	}
	return cs, nil
}
