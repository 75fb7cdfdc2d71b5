package loot

import (
	"context"
	"time"
)

// ListQuery selects sessions for an operator's listing, in the order
// (Deadline, No), one page at a time.
type ListQuery struct {
	// Status, if set, keeps only sessions in that status.
	Status Status
	// DeadlineFrom and DeadlineTo, if not zero, keep the deadlines in
	// [DeadlineFrom, DeadlineTo).
	DeadlineFrom, DeadlineTo time.Time
	// AfterDeadline and AfterNo, if AfterNo is set, keep the sessions after
	// (AfterDeadline, AfterNo) in the order: the last row of the previous
	// page. A keyset, not an offset, so a session opened between two pages
	// neither repeats a row nor hides one that was already there.
	AfterDeadline time.Time
	AfterNo       string
	// Limit is the page size, >= 1.
	Limit int
	_     struct{}
}

// Match reports whether s passes q's filters and comes after q's cursor.
func (q ListQuery) Match(s Session) bool {
	switch {
	case q.Status != "" && s.Status != q.Status:
		return false
	case !q.DeadlineFrom.IsZero() && s.Deadline.Before(q.DeadlineFrom):
		return false
	case !q.DeadlineTo.IsZero() && !s.Deadline.Before(q.DeadlineTo):
		return false
	case q.AfterNo != "":
		if c := s.Deadline.Compare(q.AfterDeadline); c < 0 || c == 0 && s.No <= q.AfterNo {
			return false
		}
	}
	return true
}

// Lister is a Store that lists sessions. It is not part of Reader: the
// Service never lists, and a Store written for the Service alone need not.
type Lister interface {
	// List returns up to q.Limit sessions that q.Match, in the order
	// (Deadline, No), members included; the slice is the caller's. An
	// error is a failed read: nothing was changed, repeat it.
	List(ctx context.Context, q ListQuery) ([]Session, error)
}
