package postgres

import (
	"context"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// listSessions is List's statement: q's filters, each off when its
// parameter is empty or NULL, then the keyset (deadline_at, session_no)
// after the cursor, in that order.
const listSessions = `SELECT ` + sessionCols + ` FROM loot_session s
WHERE ($1 = '' OR s.status = $1)
  AND ($2::timestamptz IS NULL OR s.deadline_at >= $2)
  AND ($3::timestamptz IS NULL OR s.deadline_at < $3)
  AND ($5 = '' OR (s.deadline_at, s.session_no) > ($4::timestamptz, $5))
ORDER BY s.deadline_at, s.session_no
LIMIT $6`

// List implements loot.Lister.
func (s *Store) List(ctx context.Context, q loot.ListQuery) ([]loot.Session, error) {
	if err := live(ctx); err != nil {
		return nil, wrap("list", err)
	}
	rows, err := s.pool.Query(ctx, listSessions, string(q.Status), orNull(q.DeadlineFrom), orNull(q.DeadlineTo),
		q.AfterDeadline, q.AfterNo, max(q.Limit, 0))
	if err != nil {
		return nil, wrap("list", err)
	}
	defer rows.Close()
	var out []loot.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, wrap("list", err)
		}
		out = append(out, sess)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list", err)
	}
	return out, nil
}

// orNull is t, or NULL for the zero time (no bound).
func orNull(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
