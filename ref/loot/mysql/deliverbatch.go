package mysql

import (
	"context"
	"errors"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// deliverBatch coalesces concurrent Inventory.DeliverBatch calls under
// Options.Batch: a batch of calls is one deliverTrip of all their numbers,
// whose guard (every number recorded) holds exactly when it holds for
// every call, so in the common case the batch costs the server one
// transaction of five statements instead of five per call. Each request
// is one call's distinct numbers; its answer, the grants as delivered. A
// call alone in the store's settle crew (settleBatch) delivers alone
// (deliverNos), with no hand-off to the worker and back.
type deliverBatch struct {
	b *coalesce.Lane[[]string, []loot.Grant]
}

func (b *deliverBatch) start(s *Store, crew *coalesce.Crew, opts coalesce.Options) {
	b.b = coalesce.NewCrewLane(crew, s.deliverCalls, opts)
}

func (b *deliverBatch) close() {
	if b.b != nil {
		b.b.Close()
	}
}

// deliverCalls answers the DeliverBatch calls qs in rs. A batch of one is
// the single call's trip (deliverNos). Otherwise one deliverTrip of every
// number; if some are not recorded it applied nothing, and then each call
// with a number missing from what it found is answered loot.ErrNotFound,
// alone, and the others (all their numbers recorded, which stays true: a
// grant never leaves loot_grant) share a second trip. A deadlock (after
// oneTrip's retries) or a data error on a shared trip runs the calls
// still unanswered again one by one, so that one call's bad value or a
// lock cycle with another transaction fails no more than it would
// without the batch; any other error (a connection lost: outcome unknown)
// is every remaining call's answer.
func (s *Store) deliverCalls(ctx context.Context, qs [][]string, rs []coalesce.Result[[]loot.Grant]) {
	pending := make([]int, len(qs))
	for i := range pending {
		pending[i] = i
	}
	// Two shared trips at most: the second has every number recorded.
	for trip := 0; trip < 2 && len(pending) > 1; trip++ {
		var all []loot.Grant
		for _, i := range pending {
			for _, no := range qs[i] {
				all = append(all, loot.Grant{No: no})
			}
		}
		found, applied, err := s.deliverTrip(ctx, loot.DistinctNos(all))
		if err != nil {
			var me *mysql.MySQLError
			if isDataError(err) || errors.As(err, &me) && me.Number == errDeadlock {
				break
			}
			for _, i := range pending {
				rs[i].Err = err
			}
			return
		}
		next := pending[:0]
		for _, i := range pending {
			switch missing := countMissing(found, qs[i]); {
			case applied:
				rs[i].Val = pick(found, qs[i])
			case missing > 0:
				rs[i].Err = notRecorded(missing, len(qs[i]))
			default:
				next = append(next, i)
			}
		}
		pending = next
	}
	for _, i := range pending {
		rs[i].Val, rs[i].Err = s.deliverNos(ctx, qs[i])
	}
}

// countMissing is how many of nos are not in found.
func countMissing(found map[string]loot.Grant, nos []string) int {
	n := 0
	for _, no := range nos {
		if _, ok := found[no]; !ok {
			n++
		}
	}
	return n
}
