package mysql

import (
	"context"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/ref/loot"
)

// BeginSettleBatch runs nos through the settle batcher's function as one
// batch (runBegins), in that order, for the external tests: which calls
// the coalescer puts together depends on timing, this does not.
func (s *Store) BeginSettleBatch(ctx context.Context, nos []string, lease time.Duration) ([]loot.Frozen, []error) {
	reqs := make([]beginReq, len(nos))
	for i, no := range nos {
		reqs[i] = beginReq{no, lease}
	}
	rs := make([]coalesce.Result[loot.Frozen], len(reqs))
	s.runBegins(ctx, reqs, rs)
	fzs, errs := make([]loot.Frozen, len(rs)), make([]error, len(rs))
	for i, r := range rs {
		fzs[i], errs[i] = r.Val, r.Err
	}
	return fzs, errs
}

// RecordGrantsBatch is BeginSettleBatch for RecordGrants (runRecords), of
// well-formed decisions only: a malformed one never joins a batch.
func (s *Store) RecordGrantsBatch(ctx context.Context, ds []loot.Decision) ([]loot.Session, []error) {
	reqs := make([]recordReq, len(ds))
	for i, d := range ds {
		snapshot, bad := encodeDecision(d)
		if bad != nil || !batchable(d) {
			panic(fmt.Sprintf("RecordGrantsBatch: decision %d for %q does not join a batch: %v", i, d.Session, bad))
		}
		reqs[i] = recordReq{d, snapshot}
	}
	rs := make([]coalesce.Result[loot.Session], len(reqs))
	s.runRecords(ctx, reqs, rs)
	ss, errs := make([]loot.Session, len(rs)), make([]error, len(rs))
	for i, r := range rs {
		ss[i], errs[i] = r.Val, r.Err
	}
	return ss, errs
}
