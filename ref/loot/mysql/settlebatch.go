package mysql

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// settleBatch coalesces concurrent BeginSettle and RecordGrants calls
// under Options.Batch, each kind into one CALL per batch of Schema's
// loot_begin_settle_batch_v3 or loot_record_batch_v4, whose transaction
// does for every session of the batch what the single routine does for
// one:
//
//   - Its first statement locks the batch's session rows FOR UPDATE, in
//     the order of the batch, which the store sorts by session number (so
//     two batches lock their common rows in one order and cannot
//     deadlock); a locking read locks every row it reads, matching or not,
//     under both isolation levels (measured on MariaDB 10.11: a concurrent
//     UPDATE of either kind of row waits).
//   - BeginSettle's remembers the fence before the CAS, and one UPDATE over
//     JSON_TABLE(batch) writes each session under the single routine's
//     guard; a session moved by the CAS is then one whose fence moved by
//     one.
//   - RecordGrants' first statement is the audit rows' INSERT, one per
//     session SETTLING at its decision's fence: the sessions the decisions
//     close. The grants' INSERT and the closing UPDATE after it take the
//     sessions still SETTLING at that fence that have an audit row. No
//     other session does: an audit row is written only in the transaction
//     that closes its session (here, or loot_record_v3's UPDATE then
//     INSERT), CLOSED is final, and the rows are locked since the first
//     statement, so a SETTLING session with an audit row is one this
//     transaction wrote it for.
//   - The routine returns every session of the batch with a won flag (a
//     settle: its fence moved by one; a record: CLOSED at the decision's
//     fence, which a repeat of a recorded decision also is, and which
//     change.answer answers as the single path answers a repeat, with the
//     session and no error) and, for a settle, the frozen claims of the
//     sessions it moved, in one more result set. A record batch whose
//     closing UPDATE closed every session of it (its ROW_COUNT() is the
//     batch's length: one session a decision, each closed at its fence
//     by this transaction) answers with that count alone, as
//     loot_record_v3 answers a close that won, and each session is the
//     one this Store's BeginSettle of its fence read (settling.go).
//
// Each call is then answered by change.answer from its session's row, the
// code that answers it alone: a session missing, not due, held by a live
// lease, or at another fence gets the single path's error, with no round
// trip more. Two calls on one session in a batch are answered as if one
// came after the other: the first in the batch, the second alone after it.
// A batch of one takes the single CALL. A caller alone in the store's
// settle crew (no BeginSettle, RecordGrants or Inventory.DeliverBatch of
// the store in flight: coalesce.Crew) skips the worker and sends the
// single CALL itself, as a lone claim does (claimBatch). A count per kind
// was measured before and lost: the first caller a batch answers found
// the next kind's lane empty and spent a CALL on itself every batch
// (BenchmarkLoot op=settle impl=ref-batched conc=16, 0.48-0.52 round trips
// a settle against 0.39, 2354 and 2929 settles/s against 3374 and 3361);
// the crew's count still holds the callers answered with it, so it joins
// their batch: 0.41-0.42 round trips a settle at conc 16 and 0.11 at 64,
// with or without the crew. At conc 1 it saves the two hand-offs of each
// call (to the worker and back): the client's CPU a settle 255-360 us
// against 455-470 through the worker, and 465-470 against 915-955 a
// settle through delivery (BenchmarkLootSettleDeliver), -count 2 each,
// minutes apart.
//
// The two kinds are two stages, one CALL in flight each, and what bounds
// them at conc 16 is that pipeline, not the CPU: measured on
// loot_record_batch_v3 (BenchmarkLoot op=settle impl=ref-batched, a
// local count of batch sizes), 461 of 946 BeginSettle batches held one
// call and 402 five or more (the first caller a record batch answers
// reaches the begin stage before the others it was answered with, and
// a batch is never waited for), the record CALL, the longer stage, took
// ~2 ms for ~7 settles on one server thread, and the two cores were 1.5-1.6
// busy (doc's settles: 1.9). A worker that lingers for more (150-300 us),
// two workers a kind and a cap of half the callers a batch were each
// within noise or worse.
//
// Nor does the batches' shape lift it. A local experiment (not kept):
// a stage's worker waited, up to 2 ms, for the callers the other stage's
// last batch had answered (a count the batch raised and each arriving
// caller lowered), -benchtime 3000x, ref-batched against doc in turn:
//   - Both stages waiting: every settle of the 16 in one batch (15.5 a
//     CALL), the CPU a settle 343 us against doc's 460-520 (server and
//     client), but 0.78x and 0.93x doc's settles/s. The stages then run
//     one after the other, and the cores were 1.1 busy.
//   - The same capped at 8 a batch (two groups of 8, one in each stage):
//     0.82x and 0.88x; with two workers a stage, 0.65-0.73x.
//   - Only the record stage waiting (a won BeginSettle is followed by its
//     RecordGrants in loot.Service.Settle; the begin stage's wait would
//     assume callers that come back, as the benchmark's do): 0.76x, 0.77x
//     and 0.71x, against 0.67x, 0.83x and 0.74x without.
//
// What bounds conc 16 is each CALL's statements running one after the
// other on one server thread, the doc's sixteen connections on sixteen.
// Prepared CALLs (the binary protocol: no escaping, no lexing of the
// snapshots) were within noise too: 0.87x and 0.87x at conc 1 against
// 0.89x and 0.93x, 0.94x and 0.69x at conc 16 against 0.59x and 0.85x.
//
// What lifted it is the stages' workers gathering (coalesce.Options.Gather,
// startBatchers says how much): a worker that takes a batch's first call
// yields once, so the callers woken with it by the other stage's answer
// join it. Unlike the waits above it waits for no one who is not already
// runnable, so a stage never idles for a caller still in a CALL of the
// other. Measured with a local probe (not kept), two runs each at conc 16:
// the record stage in a CALL 93-96% of the time with or without it, its
// batches 7.2-7.5 settles against 5.3 (1.5-1.6 ms a CALL against
// 1.2-1.4), the begin stage's 6.8-7.1 against 4.4.
//
// A batch that fails as a whole on a deadlock (after oneTrip's own
// retries) or on a value the server refuses (a data error, a CHECK, a
// grant number uk_grant_no holds: one decision's fault, and the batch
// wrote nothing) runs again call by call, so only the caller at fault
// fails; any other failure is every caller's outcome unknown.
type settleBatch struct {
	begins  *coalesce.Lane[beginReq, loot.Frozen]   // nil unless Options.Batch
	records *coalesce.Lane[recordReq, loot.Session] // nil unless Options.Batch
}

// beginReq is one queued BeginSettle.
type beginReq struct {
	no    string
	lease time.Duration
}

// recordReq is one queued RecordGrants of a well-formed decision, with its
// snapshot as encodeDecision encoded it.
type recordReq struct {
	d        loot.Decision
	snapshot string
}

func (b *settleBatch) start(s *Store, crew *coalesce.Crew, opts coalesce.Options) {
	b.begins = coalesce.NewCrewLane(crew, s.runBegins, opts)
	b.records = coalesce.NewCrewLane(crew, s.runRecords, opts)
}

func (b *settleBatch) close() {
	b.begins.Close()
	b.records.Close()
}

// errBatchClosed is what a call gets when the store closed under it.
var errBatchClosed = errors.New("the store was closed")

// batchDo runs one call (op) through a lane: alone() when no other call
// of the store's settle crew is in flight (coalesce.Crew), else through
// its batcher. The batch's answers are the calls' own, wrapped already,
// and so are alone's; what the batcher itself answers (ctx done before
// the batch answered, or the store closed) is wrapped as the single path
// wraps its errors. ctx must not be nil (loot.CheckContext): the batcher
// reads its Err.
func batchDo[Q, R any](ctx context.Context, op string, l *coalesce.Lane[Q, R], q Q, alone func() (R, error)) (R, error) {
	v, err := l.Do(ctx, q, alone)
	switch {
	case errors.Is(err, coalesce.ErrClosed):
		err = wrap(op, errBatchClosed)
	case err != nil && err == ctx.Err():
		err = wrap(op, err)
	}
	return v, err
}

// batchable reports whether d's strings go through a batch's JSON as they
// are: encodeDecision checked the grants', not the session's or the rule's
// and hash's, which the single CALL sends as they are and JSON could not
// (encoding/json writes U+FFFD for invalid UTF-8).
func batchable(d loot.Decision) bool {
	return loot.CheckSessionNo(d.Session) == nil && utf8.ValidString(string(d.Snapshot.Rule)) && utf8.ValidString(d.Snapshot.ClaimsHash)
}

// slot is one session of a batch: the first request on it (first), and
// what the batch's trip read of it.
type slot struct {
	first int
	read  changed
}

// plan splits reqs (sessions by no) into the batch, one request per
// session sorted by session number (the routines' lock order), and the
// requests on a session already in it (again), in their order.
func plan[Q any](reqs []Q, no func(Q) string) (batch []int, again []int) {
	seen := make(map[string]bool, len(reqs))
	for i, r := range reqs {
		if seen[no(r)] {
			again = append(again, i)
			continue
		}
		seen[no(r)] = true
		batch = append(batch, i)
	}
	slices.SortFunc(batch, func(a, b int) int {
		switch x, y := no(reqs[a]), no(reqs[b]); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return batch, again
}

// runAgain reports whether a batch's failure is answered by running its
// calls one by one: the batch wrote nothing, and the cause is one call's
// value (a data error, a CHECK, a duplicate key) or the luck of a
// deadlock, neither of which the others should share.
func runAgain(err error) bool {
	var me *mysql.MySQLError
	return isDataError(err) || isDuplicate(err) || errors.As(err, &me) && me.Number == errDeadlock
}

// runBegins answers a batch of BeginSettles.
func (s *Store) runBegins(ctx context.Context, reqs []beginReq, rs []coalesce.Result[loot.Frozen]) {
	no := func(r beginReq) string { return r.no }
	batch, again := plan(reqs, no)
	if len(batch) == 1 {
		batch, again = nil, append(batch, again...)
	}
	if len(batch) > 0 {
		err := s.beginMany(ctx, reqs, batch, rs)
		if runAgain(err) {
			again, err = append(batch, again...), nil
			slices.Sort(again)
		}
		for _, i := range batch {
			if err != nil {
				rs[i].Err = wrap("begin settle "+reqs[i].no+" (batched)", err)
			}
		}
	}
	for _, i := range again {
		rs[i].Val, rs[i].Err = s.beginOne(ctx, reqs[i].no, reqs[i].lease)
	}
}

// beginMany runs loot_begin_settle_batch_v3 for reqs[batch...] and sets
// their answers; an error is the whole batch's, and no answer is set.
func (s *Store) beginMany(ctx context.Context, reqs []beginReq, batch []int, rs []coalesce.Result[loot.Frozen]) error {
	// 32 bytes a session: ["S-000001",60000000], with the comma after it,
	// is 22 for an 8-byte number and a minute's lease in microseconds;
	// longer numbers regrow the buffer.
	items := newJSONRows(32 * len(batch))
	for _, i := range batch {
		items.row()
		items.str(reqs[i].no)
		items.int(micros(reqs[i].lease))
	}
	read, err := oneTrip(ctx, s, s.q.beginSettleBatchCall, []any{items.String()}, func(rows *sql.Rows) (map[string]*changed, error) {
		m, err := scanChanged(rows, len(batch))
		if err != nil {
			return nil, err
		}
		if err := nextSet(rows); err != nil {
			return nil, err
		}
		for rows.Next() {
			var (
				c   loot.Claim
				p   int64
				in  string
				sno string
			)
			if err := rows.Scan(&sno, &p, &in, &c.At); err != nil {
				return nil, err
			}
			r := m[sno]
			if r == nil || r.won != 1 {
				return nil, fmt.Errorf("mysql: batched settle: a claim of session %q, which the batch did not move", sno)
			}
			c.Session, c.Player, c.Intent = sno, loot.PlayerID(p), loot.Intent(in)
			r.claims = append(r.claims, c)
		}
		return m, rows.Err()
	})
	if err != nil {
		return err
	}
	for _, i := range batch {
		no := reqs[i].no
		r := changed{}
		if p := read[no]; p != nil {
			r = *p
		}
		if r.won == 1 && r.claims == nil {
			r.claims = []loot.Claim{} // as scanClaims answers the single CALL
		}
		// In player order, as the single CALL answers: the routine's
		// claims come without an ORDER BY, which cost the server a
		// temporary table and a filesort at every CALL.
		slices.SortFunc(r.claims, func(a, b loot.Claim) int { return cmp.Compare(a.Player, b.Player) })
		sess, claims, err := beginChange(no, reqs[i].lease).answer(no, r)
		if err != nil {
			rs[i].Err = wrap("begin settle "+no, err)
			continue
		}
		s.settling.put(sess)
		rs[i].Val = loot.Frozen{Session: sess, Claims: claims}
	}
	return nil
}

// recordRows are recordMany's three arrays for reqs[batch...], each
// element led by its decision's session and fence: the sessions [no,
// fence, allocated]; the grants [no, fence, lease, grant number, player,
// loot, quantity, rank]; the audit rows [no, fence, allocated, snapshot's
// fence, rule, members, effective claims, claims hash, snapshot]. The
// buffers' sizes are a guess that the appends correct: 40 bytes a
// session, 80 a grant, 100 an audit row and 5/4 of its snapshot's length
// (a 5-claim snapshot's quotes escaped make it 1.23x as long: 8 of them
// were 9304 bytes, 11473 in the array). For 8 such decisions the three
// arrays take 32-33 us and 6 allocations, json.Marshal of [N]any rows
// 60-86 us and 48 (a benchmark of the two, -count 2, not kept).
func recordRows(reqs []recordReq, batch []int) (items, grants, audits string) {
	grantCount, auditSize := 0, 0
	for _, i := range batch {
		grantCount += len(reqs[i].d.Grants)
		auditSize += 100 + len(reqs[i].snapshot)*5/4
	}
	is, gs, as := newJSONRows(40*len(batch)), newJSONRows(80*grantCount), newJSONRows(auditSize)
	for _, i := range batch {
		d := reqs[i].d
		no, fence, allocated := d.Session, int64(d.Fence), int64(len(d.Grants))
		is.row()
		is.str(no)
		is.int(fence)
		is.int(allocated)
		for _, g := range d.Grants {
			gs.row()
			gs.str(no)
			gs.int(fence)
			gs.int(micros(d.Lease))
			gs.str(g.No)
			gs.int(int64(g.Player))
			gs.str(g.Loot)
			gs.int(int64(g.Quantity))
			gs.int(int64(g.Rank))
		}
		snap := d.Snapshot
		as.row()
		as.str(no)
		as.int(fence)
		as.int(allocated)
		as.int(int64(snap.Fence))
		as.str(string(snap.Rule))
		as.int(int64(len(snap.Members)))
		as.int(int64(snap.Effective()))
		as.str(snap.ClaimsHash)
		as.str(reqs[i].snapshot)
	}
	return is.String(), gs.String(), as.String()
}

// scanChanged reads a batch routine's first result set: per session found,
// its won flag, sessionColumns and the store's now, by session number.
func scanChanged(rows *sql.Rows, n int) (map[string]*changed, error) {
	m := make(map[string]*changed, n)
	for rows.Next() {
		r := &changed{found: true}
		var err error
		if r.sess, r.now, err = scanSession(rows.Scan, "", &r.won); err != nil {
			return nil, err
		}
		m[r.sess.No] = r
	}
	return m, rows.Err()
}

// runRecords answers a batch of RecordGrants.
func (s *Store) runRecords(ctx context.Context, reqs []recordReq, rs []coalesce.Result[loot.Session]) {
	no := func(r recordReq) string { return r.d.Session }
	batch, again := plan(reqs, no)
	if len(batch) == 1 {
		batch, again = nil, append(batch, again...)
	}
	if len(batch) > 0 {
		err := s.recordMany(ctx, reqs, batch, rs)
		if runAgain(err) {
			again, err = append(batch, again...), nil
			slices.Sort(again)
		}
		for _, i := range batch {
			if err != nil {
				rs[i].Err = wrap(recordOp(reqs[i].d)+" (batched)", err)
			}
		}
	}
	for _, i := range again {
		rs[i].Val, rs[i].Err = s.recordOne(ctx, reqs[i].d, reqs[i].snapshot)
	}
}

// recordMany runs loot_record_batch_v4 for reqs[batch...] and sets their
// answers; an error is the whole batch's, and no answer is set. What the
// single CALL takes (recordOne: session, fence, lease, grants, then the
// audit row's) goes in three arrays in the batch's order, each element
// led by its decision's session and fence (the guard every statement
// applies): the sessions with the allocated quantity (the number of
// grants, JSON_LENGTH of them in loot_record_v3);
// the grants with their lease, as rows of their own; the audit rows with
// the allocated quantity, parsed only by the statement that writes them
// (the snapshots are most of the bytes, and every statement over an
// array parses all of it). A grant's session is its decision's
// (loot.CheckDecision).
func (s *Store) recordMany(ctx context.Context, reqs []recordReq, batch []int, rs []coalesce.Result[loot.Session]) error {
	items, grants, audits := recordRows(reqs, batch)
	read, err := oneTrip(ctx, s, s.q.recordBatchCall, []any{items, grants, audits}, func(rows *sql.Rows) (map[string]*changed, error) {
		cols, err := rows.Columns()
		if err != nil || len(cols) != 1 {
			return scanChanged(rows, len(batch))
		}
		closed := 0 // every session closed: the routine sent their count alone
		for rows.Next() {
			if err := rows.Scan(&closed); err != nil {
				return nil, err
			}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if closed != len(batch) {
			return nil, fmt.Errorf("mysql: batched record: the routine closed %d sessions of %d and sent no session", closed, len(batch))
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	for _, i := range batch {
		d := reqs[i].d
		var (
			sess loot.Session
			err  error
		)
		if read == nil { // every session closed, none read back
			sess, err = s.closedSession(ctx, d)
		} else {
			r := changed{}
			if p := read[d.Session]; p != nil {
				r = *p
			}
			sess, _, err = recordChange(d).answer(d.Session, r)
		}
		s.settling.forget(d.Session, d.Fence)
		rs[i].Val, rs[i].Err = sess, wrap(recordOp(d), err)
	}
	return nil
}
