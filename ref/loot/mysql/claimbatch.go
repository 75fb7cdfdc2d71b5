package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// claimBatch coalesces concurrent Claim calls under Options.Batch: a batch
// of two or more is one CALL of Schema's loot_claim_batch_v2, which takes
// the claims as one JSON array and runs loot_claim_v1's statement for all
// of them at once: one INSERT ... SELECT FROM JSON_TABLE(...) JOIN
// loot_session JOIN loot_member ... LOCK IN SHARE MODE ON DUPLICATE KEY
// UPDATE ... RETURNING, each claim judged by its own session's status,
// deadline and membership under that session row's shared lock (the guard
// is in the statement that writes, as alone), then, only when some claim
// did not land, a read of what explains the refusals. The routine runs in
// autocommit, so the batch's claims commit together when the INSERT ends,
// and a settle CAS on one of their sessions waits for that commit (and
// freezes them all) or goes first (and refuses the claims on its session).
// The price: a batch waits for the slowest of its row locks, so a
// transaction holding one session's row (a settle CAS, for its few
// statements) delays the claims of every session in that batch, and with
// one worker the next batch queues behind it.
//
// Each claim keeps its own answer, the one Claim alone would give:
//   - A caller alone in Claim claims alone (claimOne), on its own
//     goroutine; so does a batch of one.
//   - Two claims of one (session, player) in a batch are answered as if one
//     came after the other: the first in the statement, the next alone
//     after it, in the order they were queued. A session number that is
//     not valid UTF-8 is claimed alone too: JSON would carry it as another
//     string (U+FFFD for each bad byte), where alone the server refuses it
//     as a data error (loot.ErrBadArgument).
//   - A refusal explained by a state that would have accepted the claim
//     (the session moved on between the write and the read, errRaced) is
//     claimed again alone, as Claim alone sends claimTx.
//   - A batch that fails with a data error or a deadlock (InnoDB rolled its
//     statement back whole) wrote nothing: each of its claims runs again
//     alone, so a bad claim fails only its caller, and a deadlock victim's
//     claims each retry on their own (oneTrip) instead of the whole batch
//     meeting the same conflict again. Any other failure is every caller's
//     (outcome unknown).
type claimBatch struct {
	// l's caller alone claims on its own goroutine (coalesce.Lane): a batch
	// of one would be the same CALL after two goroutine hand-offs (to the
	// worker and back), and on a loaded host each costs a wait for a core.
	// Measured at concurrency 1, BenchmarkLoot: through the worker,
	// 0.55-0.72x the claims/s of Claim alone in four runs; see
	// BenchmarkLoot for after.
	l *coalesce.Lane[claimReq, claimed] // nil unless Options.Batch
}

func (b *claimBatch) start(s *Store, opts coalesce.Options) {
	b.l = coalesce.NewLane(s.runClaims, opts)
}

func (b *claimBatch) close() {
	if b.l != nil {
		b.l.Close()
	}
}

// claim answers q: through the batcher under Options.Batch when another
// caller is claiming too, alone otherwise. A nil ctx never reaches the
// batcher (claimOne refuses it).
func (b *claimBatch) claim(ctx context.Context, s *Store, q claimReq) (claimed, error) {
	alone := func() (claimed, error) { return s.claimOne(ctx, q) }
	if b.l == nil || loot.CheckContext(ctx) != nil {
		return alone()
	}
	c, err := b.l.Do(ctx, q, alone)
	if errors.Is(err, coalesce.ErrClosed) {
		err = errBatchClosed // as the settles' batchers say it (batchDo)
	}
	return c, err
}

// claimKey is what a claim row is unique by (uk_session_player).
type claimKey struct {
	no string
	p  loot.PlayerID
}

// runClaims answers a batch of claims (see claimBatch).
func (s *Store) runClaims(ctx context.Context, qs []claimReq, rs []coalesce.Result[claimed]) {
	var in, alone []int // in the statement; alone after it, in queue order
	seen := make(map[claimKey]bool, len(qs))
	for i, q := range qs {
		k := claimKey{q.no, q.p}
		if seen[k] || !utf8.ValidString(q.no) {
			alone = append(alone, i)
			continue
		}
		seen[k] = true
		in = append(in, i)
	}
	if len(in) < 2 {
		in, alone = nil, indexes(len(qs))
	}
	// The statement takes its locks in the array's order (the JSON table
	// drives the join), so every batch takes them in key order, as the
	// unique keys hold them: two batches of two nodes on the same claims
	// then wait for each other instead of deadlocking.
	slices.SortFunc(in, func(a, b int) int {
		return cmp.Or(strings.Compare(qs[a].no, qs[b].no), cmp.Compare(qs[a].p, qs[b].p))
	})
	if len(in) > 0 {
		raced, err := s.claimMany(ctx, qs, in, rs)
		var me *mysql.MySQLError
		switch {
		case isDataError(err) || errors.As(err, &me) && me.Number == errDeadlock:
			// Nothing was written: every claim alone, in queue order.
			alone = indexes(len(qs))
		case err != nil:
			for i := range rs {
				rs[i].Err = err
			}
			return
		default:
			// The raced ones first: a repeat of their key in alone
			// comes after them, as it was queued.
			alone = append(raced, alone...)
		}
	}
	for _, i := range alone {
		rs[i].Val, rs[i].Err = s.claimOne(ctx, qs[i])
	}
}

// indexes is 0, 1, ..., n-1.
func indexes(n int) []int {
	is := make([]int, n)
	for i := range is {
		is[i] = i
	}
	return is
}

// claimMany sends the claims qs[in...] (distinct keys, two or more) as one
// CALL of loot_claim_batch_v2 and answers each in rs, but for those it
// returns: refused by a state that would have accepted them (errRaced),
// to be claimed again alone. On an error it answers none.
func (s *Store) claimMany(ctx context.Context, qs []claimReq, in []int, rs []coalesce.Result[claimed]) (raced []int, err error) {
	batch := make([][4]any, len(in))
	for k, i := range in {
		q := qs[i]
		batch[k] = [4]any{q.no, int64(q.p), q.in, q.in.Priority()}
	}
	arg, err := json.Marshal(batch)
	if err != nil {
		return nil, err
	}
	type answer struct {
		landed  map[claimKey]claimed
		refused []claimRow // by place in the batch; found false when no session explained it
	}
	a, err := sendTrip(ctx, s.db, s.q.claimBatchCall, []any{string(arg)}, func(rows *sql.Rows) (answer, error) {
		a := answer{landed: make(map[claimKey]claimed, len(in))}
		for rows.Next() {
			var (
				k        claimKey
				requests int64
				c        loot.Claim
			)
			if err := rows.Scan(&k.no, &k.p, &c.Intent, &c.At, &requests); err != nil {
				return answer{}, err
			}
			c.Session, c.Player = k.no, k.p
			a.landed[k] = claimed{c: c, created: requests == 1}
		}
		if err := rows.Err(); err != nil || len(a.landed) == len(in) {
			return a, err
		}
		if err := nextSet(rows); err != nil {
			return answer{}, err
		}
		a.refused = make([]claimRow, len(in))
		for rows.Next() {
			var (
				at int
				r  = claimRow{found: true}
			)
			if err := rows.Scan(&at, &r.status, &r.deadline, &r.fence, &r.member, &r.now); err != nil {
				return answer{}, err
			}
			if at < 1 || at > len(in) {
				return answer{}, errors.New("mysql: loot_claim_batch_v2 explained a claim not in its batch")
			}
			a.refused[at-1] = r
		}
		return a, rows.Err()
	})
	if err != nil {
		return nil, err
	}
	for k, i := range in {
		q := qs[i]
		if c, ok := a.landed[claimKey{q.no, q.p}]; ok {
			rs[i].Val = c
			continue
		}
		if a.refused == nil {
			rs[i].Err = fmt.Errorf("claim of %d in %q: the batch answered another claim in its place", q.p, q.no)
			continue
		}
		c, err := a.refused[k].judge(q.no, q.p)
		if errors.Is(err, errRaced) {
			raced = append(raced, i)
			continue
		}
		rs[i].Val, rs[i].Err = c, err
	}
	return raced, nil
}
