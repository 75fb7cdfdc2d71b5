package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// Options.Batch coalesces concurrent Claim calls as it does settles
// (batch.go): one statement writes every claim of a batch, each under its
// own guard (its session CLAIMING before its deadline, the player among
// its members), and each caller gets its own answer. The claims that
// statement did not write (refused, or identical repeats) are explained
// by one more round trip for the batch: their sessions, their players'
// claims and now, judged by the same loot.CheckClaim as the single path.
// Two claims of one (session, player) in a batch are answered as if one
// came after the other: the first in the statement, the second by its own
// statement after it (one INSERT ... ON CONFLICT DO UPDATE cannot write a
// row twice). A batch of one runs the single statement (queries.claim),
// which explains a refusal in the same round trip.
//
// Why a claim the statement writes is one the settle froze: the statement
// takes every session it writes under FOR SHARE (l below) before it
// inserts, and the settle's CAS takes the row FOR NO KEY UPDATE, which
// conflicts with it. A lock that holds the row first makes the CAS wait
// until the claims committed, and BeginSettle reads the frozen claims in
// a statement after the CAS, which sees them. A row the CAS (or a Cancel)
// holds is skipped (SKIP LOCKED), so none of its claims is written; the
// explanation then finds it CLAIMING or past it: past it (the CAS or the
// Cancel committed, or the deadline passed, as it has for any CAS) is the
// refusal; still CLAIMING before its deadline and the claim not there,
// the claim runs alone (errAlone), and that statement's FOR SHARE waits
// for the holder and re-checks the row after it.
//
// Why SKIP LOCKED and not a wait: a batch holds the locks of several
// sessions, and one that waited for a row while holding others could
// wait in a cycle with a batched CAS (batch.go), whose UPDATE locks its
// rows in whatever order its plan reads them (a bitmap heap scan: the
// table's). A batch that never waits for a session holds its locks
// without waiting for anyone who waits for them. Its claim rows it takes
// in (session, player) order, so two claim batches (of two Stores) do not
// wait on each other in a cycle either.

// batchClaim writes the claims ($1 session, $2 player, $3 intent; sorted,
// one per session and player) that their guards let through, returning
// each row it wrote and whether it was inserted (xmax = 0, as in
// queries.claim). l is MATERIALIZED so that its locks are taken before
// any claim row is written.
const batchClaim = `WITH r AS (
		SELECT * FROM unnest($1::text[], $2::bigint[], $3::text[]) AS u(no, player, intent)
	), l AS MATERIALIZED (
		SELECT s.session_no FROM loot_session s
		WHERE s.session_no = ANY($1) AND CASE s.status WHEN 'CLAIMING' THEN s.deadline_at > now() ELSE false END
		FOR SHARE SKIP LOCKED
	)
	INSERT INTO loot_claim (session_no, player_id, intent, claimed_at)
	SELECT r.no, r.player, r.intent, now()
	FROM r JOIN l ON l.session_no = r.no JOIN loot_member m ON m.session_no = r.no AND m.player_id = r.player
	ORDER BY r.no, r.player
	ON CONFLICT (session_no, player_id) DO UPDATE
		SET intent = EXCLUDED.intent, claimed_at = EXCLUDED.claimed_at
		WHERE loot_claim.intent <> EXCLUDED.intent
	RETURNING session_no, player_id, claimed_at, xmax = 0`

// batchPriorClaims reads the claims of the pairs ($1 session, $2 player)
// for the explanation of what batchClaim did not write. The claims are
// found by = ANY($1), the pairs filtered after: joined to the pairs alone,
// a generic plan made while loot_claim was empty scanned every claim
// (plans_test.go).
const batchPriorClaims = `SELECT c.session_no, c.player_id, c.intent, c.claimed_at
	FROM loot_claim c
	WHERE c.session_no = ANY($1) AND EXISTS (
		SELECT 1 FROM unnest($1::text[], $2::bigint[]) AS u(no, player) WHERE u.no = c.session_no AND u.player = c.player_id)`

// claimKey is one claim row's key.
type claimKey struct {
	no string
	p  loot.PlayerID
}

// runClaims answers a batch of Claims.
func (s *Store) runClaims(ctx context.Context, reqs []claimReq, rs []coalesce.Result[claimed]) {
	if len(reqs) == 1 {
		// A batch of one costs what the single path does (its statement
		// explains a refusal in the same round trip; batchClaim would need
		// a second).
		rs[0].Val, rs[0].Err = s.claimOne(ctx, claimOp(reqs[0]), reqs[0])
		return
	}
	seen := make(map[claimKey]bool, len(reqs))
	var in, again []int
	for i, r := range reqs {
		k := claimKey{r.no, r.p}
		if seen[k] {
			again = append(again, i)
			continue
		}
		seen[k] = true
		in = append(in, i)
	}
	slices.SortFunc(in, func(a, b int) int {
		return cmp.Or(cmp.Compare(reqs[a].no, reqs[b].no), cmp.Compare(reqs[a].p, reqs[b].p))
	})
	written, err := s.claimMany(ctx, reqs, in)
	if err != nil {
		for i := range rs {
			rs[i].Err = batchFailed("claim (batched)", err)
		}
		return
	}
	var refused []int
	for _, i := range in {
		if c, ok := written[claimKey{reqs[i].no, reqs[i].p}]; ok {
			rs[i].Val = c
		} else {
			refused = append(refused, i)
		}
	}
	s.explainClaims(ctx, reqs, refused, rs)
	for _, i := range again {
		rs[i].Val, rs[i].Err = s.claimOne(ctx, claimOp(reqs[i]), reqs[i])
	}
}

// errAlone is the answer of a batched claim that its caller must run alone
// (queries.claim): the batch skipped its session, locked by a CAS or a
// Cancel not yet committed, and the lone statement waits for it in the
// caller's goroutine, not in the batcher's worker, which serves the
// others meanwhile.
var errAlone = errors.New("loot/postgres: claim to run alone")

func claimOp(r claimReq) string { return fmt.Sprintf("claim %s by %d", r.no, r.p) }

// claimMany runs batchClaim for reqs[in...] (sorted, one per key) and
// returns what it wrote, by key.
func (s *Store) claimMany(ctx context.Context, reqs []claimReq, in []int) (map[claimKey]claimed, error) {
	nos, players, intents := make([]string, len(in)), make([]int64, len(in)), make([]string, len(in))
	for k, i := range in {
		nos[k], players[k], intents[k] = reqs[i].no, int64(reqs[i].p), string(reqs[i].in)
	}
	rows, err := s.pool.Query(ctx, s.q.batchClaim, nos, players, intents)
	if err != nil {
		return nil, err
	}
	written := make(map[claimKey]claimed, len(in))
	intent := make(map[claimKey]loot.Intent, len(in))
	for k, no := range nos {
		intent[claimKey{no, loot.PlayerID(players[k])}] = loot.Intent(intents[k])
	}
	var (
		no      string
		player  int64
		at      time.Time
		created bool
	)
	_, err = pgx.ForEachRow(rows, []any{&no, &player, &at, &created}, func() error {
		k := claimKey{no, loot.PlayerID(player)}
		written[k] = claimed{c: loot.Claim{Session: no, Player: k.p, Intent: intent[k], At: utc(at)}, created: created}
		return nil
	})
	return written, err
}

// explainClaims answers the requests idx that batchClaim did not write:
// one round trip reads their sessions, their players' claims and now, and
// unwritten judges each as the single path does; one it cannot explain
// (its session was skipped, locked, or moved after the batch's snapshot)
// is answered errAlone.
func (s *Store) explainClaims(ctx context.Context, reqs []claimReq, idx []int, rs []coalesce.Result[claimed]) {
	if len(idx) == 0 {
		return
	}
	nos, players := make([]string, len(idx)), make([]int64, len(idx))
	for k, i := range idx {
		nos[k], players[k] = reqs[i].no, int64(reqs[i].p)
	}
	prior := map[claimKey]loot.Claim{}
	sessions, now, err := s.readSessions(ctx, nos, func(b *pgx.Batch) {
		b.Queue(s.q.batchPriorClaims, nos, players)
	}, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return err
		}
		cs, err := pgx.CollectRows(rows, scanBatchClaim)
		for _, c := range cs {
			prior[claimKey{c.Session, c.Player}] = c
		}
		return err
	})
	for _, i := range idx {
		r := reqs[i]
		sess, found := sessions[r.no]
		switch {
		case err != nil:
			rs[i].Err = batchFailed("explaining a batched refusal", err)
		case !found:
			rs[i].Err = notFound(r.no)
		default:
			var pc *loot.Claim
			if c, ok := prior[claimKey{r.no, r.p}]; ok {
				pc = &c
			}
			rs[i].Val, rs[i].Err = unwritten(sess, r, pc, now)
		}
		if errors.Is(rs[i].Err, errRaced) {
			rs[i].Err = errAlone
		}
	}
}
