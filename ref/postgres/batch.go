package postgres

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref"
)

// op is one queued Begin or BeginDelivered (claim), or Commit.
type op struct {
	claim  ref.Claim
	born   ref.State // a claim's state when it creates the record
	commit bool      // false: a claim
	key    ref.Key
	st     ref.State
}

// opResult answers a Begin (a Commit's is empty).
type opResult struct {
	st      ref.State
	created bool
}

// runBatch runs a batch of claims and commits in one round trip: at most
// one multi-row INSERT (queries.beginN) and one multi-row UPDATE
// (queries.commitN), pipelined together. Sending both kinds in one batch
// halves the round trips of a settlement stream (every claim is followed by
// its commit) and doubles the rows per statement, which is where batching
// wins: a row costs the server ~15us, a statement ~100us.
func (s *Store) runBatch(ctx context.Context, ops []op, rs []coalesce.Result[opResult]) {
	var claims, commits []int
	for i, o := range ops {
		if o.commit {
			commits = append(commits, i)
		} else {
			claims = append(claims, i)
		}
	}
	cl := newClaimSet(ops, claims)
	cm := newCommitSet(ops, commits)
	err := retryDeadlock(func() error {
		cl.reset()
		cm.reset()
		b := &pgx.Batch{}
		if len(claims) > 0 {
			b.Queue(s.q.beginN, cl.keys, cl.payloads, cl.leases, cl.states)
		}
		if len(commits) > 0 {
			b.Queue(s.q.commitN, cm.keys, cm.states)
		}
		br := s.pool.SendBatch(ctx, b)
		if len(claims) > 0 {
			if err := readRows(br, cl.readBegin); err != nil {
				br.Close()
				return err
			}
		}
		if len(commits) > 0 {
			if err := readRows(br, cm.read); err != nil {
				br.Close()
				return err
			}
		}
		return br.Close()
	})
	if err == nil && len(claims) > 0 {
		err = s.beginAgain(ctx, cl)
	}
	if err == nil && len(commits) > 0 {
		err = s.commitAgain(ctx, cm)
	}
	if err != nil && ctx.Err() != nil {
		// ctx is the store's lifetime: Close cancelled the batch. Say so,
		// rather than "context canceled" to callers whose own context
		// is fine.
		err = fmt.Errorf("batch cut short: %w", ref.ErrClosed)
	}
	if err != nil {
		for i := range ops {
			rs[i].Err = err
		}
		return
	}
	cl.answer(rs)
	cm.answer(ops, rs)
}

func readRows(br pgx.BatchResults, row func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := row(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// claimSet is the claims of one batch, deduplicated and in key order.
type claimSet struct {
	groups   []claimGroup
	keys     [][]byte
	payloads [][]byte
	leases   []time.Time
	states   []int16 // the state each key is born in
	pos      map[[16]byte]int
	answers  []*opResult
}

type claimGroup struct {
	key  [16]byte
	reqs []int // indices into the batch; the first owns the statement's answer
}

func newClaimSet(ops []op, idx []int) *claimSet {
	c := &claimSet{pos: make(map[[16]byte]int, len(idx))}
	for _, i := range idx {
		kb := ops[i].claim.Key.Bytes()
		if g, ok := c.pos[kb]; ok {
			c.groups[g].reqs = append(c.groups[g].reqs, i)
			continue
		}
		c.pos[kb] = len(c.groups)
		c.groups = append(c.groups, claimGroup{key: kb, reqs: []int{i}})
	}
	// Insert in key order so that batches from many nodes lock rows in the
	// same order (see queries.beginN).
	slices.SortFunc(c.groups, func(a, b claimGroup) int { return bytes.Compare(a.key[:], b.key[:]) })
	n := len(c.groups)
	c.keys, c.payloads, c.leases, c.states = make([][]byte, n), make([][]byte, n), make([]time.Time, n), make([]int16, n)
	c.answers = make([]*opResult, n)
	for gi := range c.groups {
		g := &c.groups[gi]
		cl := ops[g.reqs[0]].claim
		c.keys[gi] = g.key[:]
		c.payloads[gi] = cl.Payload
		if c.payloads[gi] == nil {
			c.payloads[gi] = []byte{} // NOT NULL column
		}
		c.leases[gi] = cl.LeaseUntil
		c.states[gi] = int16(ops[g.reqs[0]].born)
		c.pos[g.key] = gi
	}
	return c
}

func (c *claimSet) reset() { clear(c.answers) }

func (c *claimSet) readBegin(rows pgx.Rows) error {
	var (
		k  []byte
		st int16
	)
	if err := rows.Scan(&k, &st); err != nil {
		return err
	}
	if gi, ok := c.pos[[16]byte(k)]; ok {
		c.answers[gi] = &opResult{st: ref.State(st), created: true}
	}
	return nil
}

// beginAgain reads the state of the keys beginN did not insert (see
// queries.beginN).
func (s *Store) beginAgain(ctx context.Context, c *claimSet) error {
	var missing [][]byte
	for gi, a := range c.answers {
		if a == nil {
			missing = append(missing, c.keys[gi])
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
		if gi, ok := c.pos[[16]byte(k)]; ok {
			c.answers[gi] = &opResult{st: ref.State(st)}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for gi, a := range c.answers {
		if a == nil {
			return fmt.Errorf("key %x neither inserted nor found (rows are never deleted: was the table truncated?)", c.keys[gi])
		}
	}
	return nil
}

func (c *claimSet) answer(rs []coalesce.Result[opResult]) {
	for gi, g := range c.groups {
		a := *c.answers[gi]
		for n, i := range g.reqs {
			if n == 0 {
				rs[i].Val = a
				continue
			}
			// A later duplicate in the same batch: the key is on record
			// now, in the state the first request found or made, and
			// this request did not create it.
			rs[i].Val = opResult{st: a.st}
		}
	}
}

// commitSet is the commits of one batch: one row per key, at the highest
// state asked for it (an UPDATE ... FROM with two input rows for one target
// row applies one of them, arbitrarily), in key order.
type commitSet struct {
	keys   [][]byte
	states []int16
	found  map[[16]byte]bool
}

func newCommitSet(ops []op, idx []int) *commitSet {
	best := make(map[[16]byte]int16, len(idx))
	for _, i := range idx {
		kb := ops[i].key.Bytes()
		if st, ok := best[kb]; !ok || int16(ops[i].st) > st {
			best[kb] = int16(ops[i].st)
		}
	}
	ordered := make([][16]byte, 0, len(best))
	for kb := range best {
		ordered = append(ordered, kb)
	}
	slices.SortFunc(ordered, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })
	c := &commitSet{keys: make([][]byte, len(ordered)), states: make([]int16, len(ordered)), found: make(map[[16]byte]bool, len(ordered))}
	for i := range ordered {
		c.keys[i] = ordered[i][:]
		c.states[i] = best[ordered[i]]
	}
	return c
}

func (c *commitSet) reset() { clear(c.found) }

func (c *commitSet) read(rows pgx.Rows) error {
	var k []byte
	if err := rows.Scan(&k); err != nil {
		return err
	}
	c.found[[16]byte(k)] = true
	return nil
}

// commitAgain finds which of the keys commitN did not change exist (see
// queries.commitN); the others are answered ref.ErrNotFound.
func (s *Store) commitAgain(ctx context.Context, c *commitSet) error {
	var unchanged [][]byte
	for _, k := range c.keys {
		if !c.found[[16]byte(k)] {
			unchanged = append(unchanged, k)
		}
	}
	if len(unchanged) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, s.q.existsN, unchanged)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := c.read(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (c *commitSet) answer(ops []op, rs []coalesce.Result[opResult]) {
	for i, o := range ops {
		if o.commit && !c.found[o.key.Bytes()] {
			rs[i].Err = fmt.Errorf("%v: %w", o.key, ref.ErrNotFound)
		}
	}
}
