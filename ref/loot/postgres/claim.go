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
// refusal from an identical repeat (see queries.claim); with
// Options.Batch, one statement for many callers' claims (claimbatch.go).
func (s *Store) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if !in.Valid() {
		return loot.Claim{}, false, fmt.Errorf("loot/postgres: intent %q: %w", in, loot.ErrBadArgument)
	}
	op := fmt.Sprintf("claim %s by %d", no, p)
	if s.claiming != nil {
		// A number the batch's statement refuses would fail the others'
		// claims with it: refuse it alone.
		if err := loot.CheckSessionNo(no); err != nil {
			return loot.Claim{}, false, fmt.Errorf("loot/postgres: %s: %w", op, err)
		}
	}
	req := claimReq{no: no, p: p, in: in}
	r, err := retry(ctx, op, func() (claimed, error) {
		alone := func() (claimed, error) { return s.claimOne(ctx, op, req) }
		if s.claiming == nil {
			return alone()
		}
		c, err := laneDo(ctx, s.claiming, req, alone)
		if errors.Is(err, errAlone) {
			return alone()
		}
		return c, err
	})
	return r.c, r.created, err
}

// claimReq is one Claim's arguments; claimed is its answer.
type claimReq struct {
	no string
	p  loot.PlayerID
	in loot.Intent
}

type claimed struct {
	c       loot.Claim
	created bool
}

// claimOne is one attempt of Claim on its own.
func (s *Store) claimOne(ctx context.Context, op string, r claimReq) (claimed, error) {
	var (
		at, deadline, priorAt *time.Time
		created, member       *bool
		status, prior         *string
		fence                 *int64
		now                   time.Time
	)
	err := s.pool.QueryRow(ctx, s.q.claim, r.no, int64(r.p), string(r.in)).
		Scan(&at, &created, &status, &deadline, &fence, &member, &prior, &priorAt, &now)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return claimed{}, notFound(r.no)
	case err != nil:
		return claimed{}, wrap(op, err)
	case at != nil:
		return claimed{c: loot.Claim{Session: r.no, Player: r.p, Intent: r.in, At: utc(*at)}, created: *created}, nil
	}
	// Nothing written: refused, or an identical repeat. Tell which.
	st := loot.Session{Spec: loot.Spec{No: r.no, Deadline: utc(*deadline)}, Status: loot.Status(*status), Fence: loot.Fence(*fence)}
	if *member {
		st.Members = []loot.PlayerID{r.p}
	}
	var pc *loot.Claim
	if prior != nil {
		pc = &loot.Claim{Session: r.no, Player: r.p, Intent: loot.Intent(*prior), At: utc(*priorAt)}
	}
	return unwritten(st, r, pc, utc(now))
}

// unwritten answers a claim whose write returned no row, from the session
// st (its status, deadline and fence, and r.p among its members if r.p is
// one), the player's claim as it is (nil: none) and the database's now: a
// refusal, an identical repeat (answered with the claim as it was
// recorded, created false), or errRaced when neither explains it (the row
// moved after the write's snapshot).
func unwritten(st loot.Session, r claimReq, prior *loot.Claim, now time.Time) (claimed, error) {
	if err := loot.CheckClaim(st, r.p, now); err != nil {
		return claimed{}, err
	}
	if prior != nil && prior.Intent == r.in {
		return claimed{c: *prior}, nil
	}
	return claimed{}, errRaced
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
