package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref"
)

type beginResult struct {
	st      ref.State
	created bool
}

type commitReq struct {
	key ref.Key
	st  ref.State
}

// Begin implements ref.Store.
func (s *Store) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	if s.closed.Load() {
		return ref.StateNew, false, s.wrap("begin", ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return ref.StateNew, false, s.wrap("begin", err)
	}
	if s.begins != nil {
		r, err := s.begins.Do(ctx, c)
		if err != nil {
			return ref.StateNew, false, s.wrap("begin", err)
		}
		return r.st, r.created, nil
	}
	st, created, err := s.begin1(ctx, c)
	if err != nil {
		return ref.StateNew, false, s.wrap("begin", err)
	}
	return st, created, nil
}

func (s *Store) begin1(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	kb := c.Key.Bytes()
	payload := c.Payload
	if payload == nil {
		payload = []byte{} // NOT NULL column: nil would be sent as NULL
	}
	var (
		st      int16
		created bool
	)
	err := s.pool.QueryRow(ctx, s.q.begin1, kb[:], payload, c.LeaseUntil).Scan(&st, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		// Inserted concurrently after our snapshot (see queries.begin1).
		created = false
		err = s.pool.QueryRow(ctx, s.q.beginAgain, kb[:]).Scan(&st)
		if errors.Is(err, pgx.ErrNoRows) {
			return ref.StateNew, false, fmt.Errorf("key %v neither inserted nor found (rows are never deleted: was the table truncated?)", c.Key)
		}
	}
	if err != nil {
		return ref.StateNew, false, err
	}
	return ref.State(st), created, nil
}

// beginBatch claims a batch of keys in one statement. A key may be claimed
// twice in one batch (concurrent duplicates): the first request gets the
// statement's answer and the others see the claim the first one made.
func (s *Store) beginBatch(ctx context.Context, cs []ref.Claim, rs []coalesce.Result[beginResult]) {
	type group struct {
		key  [16]byte
		reqs []int // indices into cs, first one owns the answer
	}
	byKey := make(map[ref.Key]int, len(cs))
	groups := make([]group, 0, len(cs))
	for i, c := range cs {
		if g, ok := byKey[c.Key]; ok {
			groups[g].reqs = append(groups[g].reqs, i)
			continue
		}
		byKey[c.Key] = len(groups)
		groups = append(groups, group{key: c.Key.Bytes(), reqs: []int{i}})
	}
	// Insert in key order so that batches from many nodes lock rows in the
	// same order (see queries.beginN).
	slices.SortFunc(groups, func(a, b group) int { return bytes.Compare(a.key[:], b.key[:]) })
	keys := make([][]byte, len(groups))
	payloads := make([][]byte, len(groups))
	leases := make([]time.Time, len(groups))
	pos := make(map[[16]byte]int, len(groups))
	for gi := range groups {
		g := &groups[gi]
		c := cs[g.reqs[0]]
		keys[gi] = g.key[:]
		payloads[gi] = c.Payload
		if payloads[gi] == nil {
			payloads[gi] = []byte{}
		}
		leases[gi] = c.LeaseUntil
		pos[g.key] = gi
	}
	answers := make([]*beginResult, len(groups))
	err := retryDeadlock(func() error {
		clear(answers)
		rows, err := s.pool.Query(ctx, s.q.beginN, keys, payloads, leases)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				k       []byte
				st      int16
				created bool
			)
			if err := rows.Scan(&k, &st, &created); err != nil {
				return err
			}
			if gi, ok := pos[[16]byte(k)]; ok {
				answers[gi] = &beginResult{st: ref.State(st), created: created}
			}
		}
		return rows.Err()
	})
	if err == nil {
		err = s.beginAgainBatch(ctx, keys, pos, answers)
	}
	for gi, g := range groups {
		for n, i := range g.reqs {
			switch {
			case err != nil:
				rs[i].Err = err
			case n == 0:
				rs[i].Val = *answers[gi]
			default:
				// A later duplicate in the same batch: the key is on
				// record now, in the state the first request found or
				// made, and this request did not create it.
				rs[i].Val = beginResult{st: answers[gi].st}
			}
		}
	}
}

// beginAgainBatch reads the keys beginN returned nothing for.
func (s *Store) beginAgainBatch(ctx context.Context, keys [][]byte, pos map[[16]byte]int, answers []*beginResult) error {
	var missing [][]byte
	for gi, a := range answers {
		if a == nil {
			missing = append(missing, keys[gi])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, s.q.beginAgainN, missing)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			k  []byte
			st int16
		)
		if err := rows.Scan(&k, &st); err != nil {
			return err
		}
		if gi, ok := pos[[16]byte(k)]; ok {
			answers[gi] = &beginResult{st: ref.State(st)}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for gi, a := range answers {
		if a == nil {
			return fmt.Errorf("key %x neither inserted nor found (rows are never deleted: was the table truncated?)", keys[gi])
		}
	}
	return nil
}

// Commit implements ref.Store.
func (s *Store) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	if s.closed.Load() {
		return s.wrap("commit", ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return s.wrap("commit", err)
	}
	if s.commit != nil {
		_, err := s.commit.Do(ctx, commitReq{key: key, st: st})
		if err != nil {
			return s.wrap("commit", err)
		}
		return nil
	}
	kb := key.Bytes()
	var found bool
	if err := s.pool.QueryRow(ctx, s.q.commit1, kb[:], int16(st)).Scan(&found); err != nil {
		return s.wrap("commit", err)
	}
	if !found {
		return fmt.Errorf("postgres: commit %v: %w", key, ref.ErrNotFound)
	}
	return nil
}

// commitBatch advances a batch of keys in one statement. Duplicates of a key
// in one batch are merged to the highest state (an UPDATE ... FROM with two
// input rows for one target row applies one of them, arbitrarily).
func (s *Store) commitBatch(ctx context.Context, reqs []commitReq, rs []coalesce.Result[struct{}]) {
	best := make(map[[16]byte]int16, len(reqs))
	for _, r := range reqs {
		kb := r.key.Bytes()
		if st, ok := best[kb]; !ok || int16(r.st) > st {
			best[kb] = int16(r.st)
		}
	}
	ordered := make([][16]byte, 0, len(best))
	for kb := range best {
		ordered = append(ordered, kb)
	}
	// Key order for the same reason as in beginBatch.
	slices.SortFunc(ordered, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	keys := make([][]byte, len(ordered))
	states := make([]int16, len(ordered))
	for i := range ordered {
		keys[i] = ordered[i][:]
		states[i] = best[ordered[i]]
	}
	found := make(map[[16]byte]bool, len(keys))
	err := retryDeadlock(func() error {
		clear(found)
		rows, err := s.pool.Query(ctx, s.q.commitN, keys, states)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var k []byte
			if err := rows.Scan(&k); err != nil {
				return err
			}
			found[[16]byte(k)] = true
		}
		return rows.Err()
	})
	for i, r := range reqs {
		switch {
		case err != nil:
			rs[i].Err = err
		case !found[r.key.Bytes()]:
			rs[i].Err = fmt.Errorf("%v: %w", r.key, ref.ErrNotFound)
		}
	}
}

// retryDeadlock runs f again when PostgreSQL aborted it as a deadlock victim
// (SQLSTATE 40P01). Each batch is one autocommit statement, so an aborted one
// changed nothing and rerunning it is safe. Sorted keys make deadlocks
// unlikely; three attempts make one that still happens invisible.
func retryDeadlock(f func() error) error {
	var err error
	for range 3 {
		err = f()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "40P01" {
			return err
		}
	}
	return err
}

// Pending implements ref.PendingStore.
func (s *Store) Pending(ctx context.Context, now time.Time, limit int) ([]ref.Record, error) {
	if s.closed.Load() {
		return nil, s.wrap("pending", ref.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return nil, s.wrap("pending", err)
	}
	if limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, s.q.pending, now, limit)
	if err != nil {
		return nil, s.wrap("pending", err)
	}
	defer rows.Close()
	var out []ref.Record
	for rows.Next() {
		var (
			k       []byte
			payload []byte
			lease   time.Time
		)
		if err := rows.Scan(&k, &payload, &lease); err != nil {
			return nil, s.wrap("pending", err)
		}
		if len(k) != 16 {
			return nil, s.wrap("pending", fmt.Errorf("%w: key of %d bytes", ErrSchema, len(k)))
		}
		out = append(out, ref.Record{Key: ref.KeyFromBytes([16]byte(k)), State: ref.StateGranted, Payload: payload, LeaseUntil: lease.UTC()})
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("pending", err)
	}
	return out, nil
}
