package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// Options.Batch: concurrent BeginSettle and RecordGrants calls (and
// Claims: claimbatch.go) on one Store are coalesced (internal/coalesce)
// into one statement per kind and batch: the CAS of many sessions is one UPDATE ... FROM unnest(...), the
// results of many settlers one statement that closes their sessions and
// inserts all their grants and snapshots. Each call keeps its own answer:
// a session is written only under its own guard, a refused call is
// explained by a read of its row (one more round trip for the batch, only
// when some call was refused), and a batch that hits a constraint (a
// malformed decision) is run again call by call, so one bad decision
// fails only its caller. Two calls on one session in a batch are answered
// as if one came after the other: the first in the statement, the second
// by its own statement after it. A call with no other of its kind in
// flight, and a batch of one, run the unbatched call (laneDo).

// The batched statements (copied into queries, so the test clock reaches
// them). Their guards on status are CASE, as in queries.go: a generic plan
// does not know how many sessions the array holds, and with the statuses
// indexable it measured choosing to scan every due session (a backlog of
// thousands, for a batch of two) over probing the primary key once per
// session.
const (
	batchBeginSettle = `WITH i AS (SELECT * FROM unnest($1::text[], $2::interval[]) AS u(no, lease))
		UPDATE loot_session s SET status = 'SETTLING', fence = s.fence + 1, settle_until = now() + i.lease
		FROM i
		WHERE s.session_no = ANY($1) AND s.session_no = i.no
			AND CASE s.status WHEN 'CLAIMING' THEN s.deadline_at <= now() WHEN 'SETTLING' THEN s.settle_until <= now() ELSE false END
		RETURNING ` + sessionCols
	batchClaims = `SELECT c.session_no, c.player_id, c.intent, c.claimed_at FROM loot_claim c
		WHERE c.session_no = ANY($1) ORDER BY c.session_no, c.player_id`
	batchReadSessions = `SELECT ` + sessionCols + ` FROM loot_session s WHERE s.session_no = ANY($1)`
	batchRecord       = `WITH d AS (
			SELECT * FROM unnest($1::text[], $2::bigint[], $3::integer[], $4::interval[]) AS u(no, fence, allocated, lease)
		), s AS (
			UPDATE loot_session s SET status = 'CLOSED', allocated = d.allocated
			FROM d
			WHERE s.session_no = ANY($1) AND s.session_no = d.no AND CASE s.status WHEN 'SETTLING' THEN s.fence = d.fence ELSE false END
			RETURNING s.*, d.lease
		), g AS (
			INSERT INTO loot_grant (grant_no, session_no, player_id, loot_code, quantity, rank, status, attempts, lease_until)
			SELECT u.grant_no, s.session_no, u.player_id, u.loot_code, u.quantity, u.rank, 'PENDING', 0, now() + s.lease
			FROM unnest($5::text[], $6::text[], $7::bigint[], $8::text[], $9::integer[], $10::integer[])
				AS u(session_no, grant_no, player_id, loot_code, quantity, rank)
			JOIN s ON s.session_no = u.session_no
		), a AS (
			INSERT INTO loot_snapshot (session_no, fence, dungeon_code, loot_code, quantity, deadline_at, rule_version,
				members, claims, claims_hash, winners, recorded_at)
			SELECT s.session_no, x.fence, x.dungeon_code, x.loot_code, x.quantity, x.deadline_at, x.rule_version,
				x.members::bigint[], x.claims::jsonb, x.claims_hash, x.winners::bigint[], now()
			FROM unnest($11::text[], $12::bigint[], $13::text[], $14::text[], $15::integer[], $16::timestamptz[],
				$17::text[], $18::text[], $19::text[], $20::text[], $21::text[])
				AS x(session_no, fence, dungeon_code, loot_code, quantity, deadline_at, rule_version, members, claims, claims_hash, winners)
			JOIN s ON s.session_no = x.session_no
		)
		SELECT ` + sessionCols + ` FROM s`
)

// settleReq is one queued BeginSettle.
type settleReq struct {
	no    string
	lease time.Duration
}

// recordReq is one queued RecordGrants, validated, its claims encoded.
type recordReq struct {
	d      loot.Decision
	claims []byte
}

// batcher options: one worker, as ref/postgres measured (a second one
// splits the callers into smaller batches and competes for the database
// host's cores), batches of up to 256 (above the 64 concurrent callers the
// benchmarks run).
const (
	batchWorkers = 1
	maxBatch     = 256
)

func (s *Store) startBatchers() {
	life, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	// Batches run under the store's lifetime, not one caller's context:
	// each serves many callers, who return on their own contexts anyway.
	opts := coalesce.Options{Workers: batchWorkers, MaxBatch: maxBatch,
		Context: func() (context.Context, context.CancelFunc) { return life, func() {} }}
	// A settle's calls follow each other (BeginSettle, RecordGrants, then
	// the Inventory's DeliverBatch), so their lanes share one count of
	// callers in flight (coalesce.Crew):
	// with a count each, the first caller a record batch answered found
	// the settles' lane empty and began alone, every batch. Measured,
	// BenchmarkLootSettle impl=ref-batched, -benchtime 2000x -count 2,
	// one run after the other: sql-rtt/op 0.54-0.56 with the crew against
	// 0.62-0.66 at conc 16 (3246, 3707 settles/s against 3010, 3284), 0.16
	// against 0.19-0.21 at conc 64 (5490, 6514 against 5041, 5423); conc 1
	// runs alone either way.
	//
	// The three also gather (coalesce.Options.Gather): the callers a
	// batch answered reach the next lane together, and without it the
	// first of them went alone while the rest waited out its round trip.
	// Measured, ref-batched/doc, the two builds in turn (-benchtime 2000x),
	// BenchmarkLootSettle six runs each, BenchmarkLootSettleDeliver three:
	//
	//	settle   conc 16  gather 2.05 1.83 2.10 1.81 1.93 2.19  sql-rtt/op 0.47-0.49
	//	                  before 1.70 1.70 1.93 1.96 1.85 1.84  sql-rtt/op 0.59-0.60
	//	         conc 64  gather 3.59 3.95 3.41 4.12 4.30 4.12  sql-rtt/op 0.13-0.14
	//	                  before 4.24 3.85 4.85 3.72 3.76 3.83  sql-rtt/op 0.17
	//	deliver  conc 16  gather 2.01 2.24 2.34                 sql-rtt/op 0.80-0.81
	//	                  before 2.00 1.90 1.99                 sql-rtt/op 0.97-1.06
	//	         conc 64  gather 3.87 3.88 3.80                 sql-rtt/op 0.23-0.25
	//	                  before 3.35 3.88 3.80                 sql-rtt/op 0.31-0.32
	var crew coalesce.Crew
	settle := opts
	settle.Gather = true
	s.settles = coalesce.NewCrewLane(&crew, s.runSettles, settle)
	s.records = coalesce.NewCrewLane(&crew, s.runRecords, settle)
	s.delivers = coalesce.NewCrewLane(&crew, s.runDelivers, settle)
	s.claiming = coalesce.NewLane(s.runClaims, opts)
}

// runSettles answers a batch of BeginSettles.
func (s *Store) runSettles(ctx context.Context, reqs []settleReq, rs []coalesce.Result[loot.Frozen]) {
	if len(reqs) == 1 {
		// A batch of one costs what the single path does: its statements
		// are the lighter ones (no unnest, no join).
		rs[0].Val, rs[0].Err = s.beginOne(ctx, "begin settle "+reqs[0].no, reqs[0].no, reqs[0].lease)
		return
	}
	first := map[string]int{} // session -> its first request in the batch
	var (
		nos    []string
		leases []time.Duration
		again  []int // requests on a session already in the statement
	)
	for i, r := range reqs {
		if _, dup := first[r.no]; dup {
			again = append(again, i)
			continue
		}
		first[r.no] = i
		nos, leases = append(nos, r.no), append(leases, r.lease)
	}
	won := map[string]loot.Session{}
	claims := map[string][]loot.Claim{}
	err := s.send(ctx, func(b *pgx.Batch) {
		b.Queue(s.q.batchBeginSettle, nos, leases)
		b.Queue(s.q.batchClaims, nos)
	}, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		ss, err := collectSessions(rows)
		if err != nil {
			return err
		}
		for _, sess := range ss {
			won[sess.No] = sess
		}
		if rows, err = br.Query(); err != nil {
			return err
		}
		cs, err := pgx.CollectRows(rows, scanBatchClaim)
		for _, c := range cs {
			claims[c.Session] = append(claims[c.Session], c)
		}
		return err
	})
	if err != nil {
		for i := range rs {
			rs[i].Err = batchFailed("begin settle (batched)", err)
		}
		return
	}
	var refused []int
	for _, i := range first {
		sess, ok := won[reqs[i].no]
		if !ok {
			refused = append(refused, i)
			continue
		}
		cs := claims[sess.No]
		if cs == nil {
			cs = []loot.Claim{}
		}
		rs[i].Val = loot.Frozen{Session: sess, Claims: cs}
	}
	explain(s, ctx, append(refused, again...), func(i int) string { return reqs[i].no }, rs, func(_ int, sess loot.Session, now time.Time) (loot.Frozen, error) {
		if err := loot.CheckSettle(sess, now); err != nil {
			return loot.Frozen{}, err
		}
		return loot.Frozen{}, errRaced
	})
}

// scanBatchClaim reads one row of batchClaims.
func scanBatchClaim(row pgx.CollectableRow) (loot.Claim, error) {
	var (
		c      loot.Claim
		player int64
		intent string
	)
	if err := row.Scan(&c.Session, &player, &intent, &c.At); err != nil {
		return loot.Claim{}, err
	}
	c.Player, c.Intent, c.At = loot.PlayerID(player), loot.Intent(intent), utc(c.At)
	return c, nil
}

// explain answers the refused requests idx of a batch (sessions by no):
// it reads their rows and the clock (one round trip) and sets each
// answer to what check says of its row; a session that does not exist is
// ErrNotFound.
func explain[R any](s *Store, ctx context.Context, idx []int, no func(int) string, rs []coalesce.Result[R],
	check func(i int, sess loot.Session, now time.Time) (R, error)) {
	if len(idx) == 0 {
		return
	}
	nos := make([]string, len(idx))
	for k, i := range idx {
		nos[k] = no(i)
	}
	rows, now, err := s.readSessions(ctx, nos, func(*pgx.Batch) {}, func(pgx.BatchResults) error { return nil })
	for _, i := range idx {
		sess, found := rows[no(i)]
		switch {
		case err != nil:
			rs[i].Err = batchFailed("explaining a batched refusal", err)
		case !found:
			rs[i].Err = notFound(no(i))
		default:
			rs[i].Val, rs[i].Err = check(i, sess, now)
		}
	}
}

// readSessions reads the sessions nos (by number; a missing one is absent)
// and the database's now in one round trip, with whatever more queues
// (read by more after them).
func (s *Store) readSessions(ctx context.Context, nos []string, queue func(*pgx.Batch), more func(pgx.BatchResults) error) (map[string]loot.Session, time.Time, error) {
	rows := map[string]loot.Session{}
	var now time.Time
	err := s.send(ctx, func(b *pgx.Batch) {
		b.Queue(s.q.batchReadSessions, nos)
		b.Queue(s.q.now)
		queue(b)
	}, func(br pgx.BatchResults) error {
		r, err := br.Query()
		if err != nil {
			return err
		}
		ss, err := collectSessions(r)
		if err != nil {
			return err
		}
		for _, sess := range ss {
			rows[sess.No] = sess
		}
		if err := br.QueryRow().Scan(&now); err != nil {
			return err
		}
		return more(br)
	})
	return rows, utc(now), err
}

// runRecords answers a batch of RecordGrants.
func (s *Store) runRecords(ctx context.Context, reqs []recordReq, rs []coalesce.Result[loot.Session]) {
	if len(reqs) == 1 { // as runSettles
		rs[0].Val, rs[0].Err = s.recordOne(ctx, reqs[0])
		return
	}
	seen := map[string]bool{}
	var in, again []int
	for i, r := range reqs {
		if seen[r.d.Session] {
			again = append(again, i)
			continue
		}
		seen[r.d.Session] = true
		in = append(in, i)
	}
	closed, err := s.recordMany(ctx, reqs, in)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (strings.HasPrefix(pe.Code, "23") || isDataException(err)) {
		// A constraint or a data exception refused some decision and the
		// statement wrote nothing: answer each call alone, so only the bad
		// one fails.
		again, closed, err = append(in, again...), nil, nil
	}
	if err != nil {
		for i := range rs {
			rs[i].Err = batchFailed("record grants (batched)", err)
		}
		return
	}
	var refused []int
	for _, i := range in {
		if sess, ok := closed[reqs[i].d.Session]; ok {
			rs[i].Val = sess
		} else {
			refused = append(refused, i)
		}
	}
	explain(s, ctx, refused, func(i int) string { return reqs[i].d.Session }, rs, func(i int, sess loot.Session, _ time.Time) (loot.Session, error) {
		apply, err := loot.CheckRecord(sess, reqs[i].d.Fence)
		if apply {
			return loot.Session{}, errRaced
		}
		return sess, err
	})
	for _, i := range again {
		rs[i].Val, rs[i].Err = s.recordOne(ctx, reqs[i])
	}
}

// recordMany runs batchRecord for reqs[in...] (one per session) and
// returns the sessions it closed.
func (s *Store) recordMany(ctx context.Context, reqs []recordReq, in []int) (map[string]loot.Session, error) {
	var (
		nos, gSess, gNos, gLoots, xDungeons, xLoots, xRules, xMembers, xClaims, xHashes, xWinners []string
		fences, gPlayers, xFences                                                                 []int64
		allocated, gQuantities, gRanks, xQuantities                                               []int32
		leases                                                                                    []time.Duration
		xDeadlines                                                                                []time.Time
	)
	for _, i := range in {
		d, snap := reqs[i].d, reqs[i].d.Snapshot
		nos, fences, allocated, leases = append(nos, d.Session), append(fences, int64(d.Fence)), append(allocated, int32(len(d.Grants))), append(leases, d.Lease)
		for _, g := range d.Grants {
			gSess, gNos, gPlayers, gLoots = append(gSess, d.Session), append(gNos, g.No), append(gPlayers, int64(g.Player)), append(gLoots, g.Loot)
			gQuantities, gRanks = append(gQuantities, int32(g.Quantity)), append(gRanks, int32(g.Rank))
		}
		xFences, xDungeons, xLoots, xQuantities = append(xFences, int64(snap.Fence)), append(xDungeons, snap.Dungeon), append(xLoots, snap.Loot), append(xQuantities, int32(snap.Quantity))
		xDeadlines, xRules, xClaims, xHashes = append(xDeadlines, snap.Deadline), append(xRules, string(snap.Rule)), append(xClaims, string(reqs[i].claims)), append(xHashes, snap.ClaimsHash)
		xMembers, xWinners = append(xMembers, arrayLiteral(snap.Members)), append(xWinners, arrayLiteral(snap.Winners))
	}
	rows, err := s.pool.Query(ctx, s.q.batchRecord, nos, fences, allocated, leases,
		gSess, gNos, gPlayers, gLoots, gQuantities, gRanks,
		nos, xFences, xDungeons, xLoots, xQuantities, xDeadlines, xRules, xMembers, xClaims, xHashes, xWinners)
	if err != nil {
		return nil, err
	}
	ss, err := collectSessions(rows)
	if err != nil {
		return nil, err
	}
	closed := make(map[string]loot.Session, len(ss))
	for _, sess := range ss {
		closed[sess.No] = sess
	}
	return closed, nil
}

// arrayLiteral is ps as a PostgreSQL array literal ("{1,2,3}"): the
// snapshot's member and winner arrays differ in length from one session
// to the next, which a two-dimensional array cannot hold.
func arrayLiteral(ps []loot.PlayerID) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(int64(p), 10))
	}
	b.WriteByte('}')
	return b.String()
}

// batchFailed is the answer of every call in a batch whose statement
// failed: outcome unknown, even for a data exception, since the value it
// refused may be another caller's (BeginSettle checks each session number
// before it joins a batch, so none should be).
func batchFailed(op string, err error) error {
	return fmt.Errorf("loot/postgres: %s: %w", op, err)
}

// errBatchClosed is what a call gets when the store closed under it.
var errBatchClosed = fmt.Errorf("loot/postgres: store closed")

// runDelivers answers a batch of DeliverBatch calls under Options.Batch
// (each request is one call's distinct numbers) with one deliverNos of
// every number in them: its guard (every number recorded) holds exactly
// when it holds for every call, and it locks the grants in grant_no
// order, so batches that share grants wait for each other instead of
// deadlocking. A number in two calls is delivered once and answered to
// both, SUCCESS, as the second call alone would find it. When the
// statement applied nothing (some call has a number never recorded), or
// failed on a value (a data exception: one call's string) or a
// serialization failure, it wrote nothing, and each call runs again
// alone, so only the call at fault fails; any other failure (a connection
// lost: outcome unknown) is every call's.
func (s *Store) runDelivers(ctx context.Context, qs [][]string, rs []coalesce.Result[[]loot.Grant]) {
	alone := func(nos []string) ([]loot.Grant, error) {
		recs, err := s.deliverNos(ctx, nos)
		return recs, wrap(fmt.Sprintf("deliver %d grants", len(nos)), err)
	}
	if len(qs) == 1 {
		rs[0].Val, rs[0].Err = alone(qs[0])
		return
	}
	all := slices.Compact(slices.Sorted(slices.Values(slices.Concat(qs...))))
	recs, err := s.deliverNos(ctx, all)
	var pe *pgconn.PgError
	if errors.Is(err, errNotRecorded) || isDataException(err) || errors.As(err, &pe) && strings.HasPrefix(pe.Code, "40") {
		for i, q := range qs {
			rs[i].Val, rs[i].Err = alone(q)
		}
		return
	}
	if err != nil {
		for i := range rs {
			rs[i].Err = batchFailed("deliver (batched)", err)
		}
		return
	}
	byNo := make(map[string]loot.Grant, len(recs))
	for _, g := range recs {
		byNo[g.No] = g
	}
	for i, q := range qs {
		gs := make([]loot.Grant, len(q))
		for k, no := range q {
			gs[k] = byNo[no]
		}
		rs[i].Val = gs
	}
}

// laneDo answers q alone or through l (coalesce.Lane: a caller alone, as
// at concurrency 1, runs the unbatched call itself, which is what a batch
// of one runs too: runSettles, runRecords, runClaims), mapping the
// batcher's closing error.
func laneDo[Q, R any](ctx context.Context, l *coalesce.Lane[Q, R], q Q, alone func() (R, error)) (R, error) {
	v, err := l.Do(ctx, q, alone)
	if errors.Is(err, coalesce.ErrClosed) {
		err = errBatchClosed
	}
	return v, err
}

// collectSessions reads every row of a statement returning sessionCols.
func collectSessions(rows pgx.Rows) ([]loot.Session, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (loot.Session, error) { return scanSession(row) })
}
