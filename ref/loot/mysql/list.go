package mysql

import (
	"context"

	"github.com/onceproof/onceproof/ref/loot"
)

// listSessions is List's statement: q's filters, each off when its
// parameter is empty, then the keyset (deadline_at, session_no) after the
// cursor, in that order (the keyset spelled out: the order of the row
// comparison (deadline_at, session_no) > (?, ?), with each placeholder a
// plain value). Sessions are few next to claims and grants (one per
// dungeon run) and an operator's listing is rare, so no index is added for
// it; a status filter can use idx_status_deadline.
const listSessions = `SELECT ` + sessionColumns + ` FROM ` + sessionFrom + `
WHERE (? = '' OR s.status = ?)
  AND (? = 0 OR s.deadline_at >= ?)
  AND (? = 0 OR s.deadline_at < ?)
  AND (? = '' OR s.deadline_at > ? OR (s.deadline_at = ? AND s.session_no > ?))
ORDER BY s.deadline_at, s.session_no
LIMIT ?`

var _ loot.Lister = (*Store)(nil)

// List implements loot.Lister.
func (s *Store) List(ctx context.Context, q loot.ListQuery) ([]loot.Session, error) {
	if err := loot.CheckContext(ctx); err != nil {
		return nil, wrap("list", err)
	}
	from, to := !q.DeadlineFrom.IsZero(), !q.DeadlineTo.IsZero()
	rows, err := s.db.QueryContext(ctx, listSessions,
		string(q.Status), string(q.Status),
		from, q.DeadlineFrom.UTC(), to, q.DeadlineTo.UTC(),
		q.AfterNo, q.AfterDeadline.UTC(), q.AfterDeadline.UTC(), q.AfterNo,
		max(q.Limit, 0))
	if err != nil {
		return nil, wrap("list", err)
	}
	defer rows.Close()
	var out []loot.Session
	for rows.Next() {
		// listSessions has no now column: scanSession's last destination
		// (the store's now) is left out of the scan.
		sess, _, err := scanSession(func(dest ...any) error { return rows.Scan(dest[:len(dest)-1]...) }, "listed")
		if err != nil {
			return nil, wrap("list", err)
		}
		out = append(out, sess)
	}
	return out, wrap("list", rows.Err())
}
