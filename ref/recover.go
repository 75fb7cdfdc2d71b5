package ref

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoPending: Recover on a store that cannot list pending records.
var ErrNoPending = errors.New("ref: store cannot list pending records (implement PendingStore)")

// recoverBatch bounds one Pending call so that a node coming back after a
// long outage does not load every unfinished record into memory at once.
const recoverBatch = 256

// Recover completes every StateGranted record whose lease ended at or before
// now: it delivers the recorded payload through the idempotent Sink (a no-op
// where the effect already landed: that is how it checks the sink) and commits
// StateDelivered. It never runs a grant again. Call it when a node starts,
// and periodically, on any node: concurrent Recovers are safe.
//
// It returns how many records it completed and the errors it met (joined);
// records that failed stay StateGranted for the next Recover or retry.
func (s *Settler) Recover(ctx context.Context, now time.Time) (int, error) {
	if s.sink == nil {
		return 0, ErrNoSink
	}
	ps, ok := s.store.(PendingStore)
	if !ok {
		return 0, ErrNoPending
	}
	return recoverAll(ctx, ps, s.sink, now, &s.stats)
}

// Recover is Settler.Recover without a Settler: it completes st's Granted
// records whose lease ended at or before now through sink. A process that
// only recovers (a sweeper next to the settler nodes) needs nothing else.
func Recover(ctx context.Context, st PendingStore, sink Sink, now time.Time) (int, error) {
	if st == nil || sink == nil {
		panic("ref.Recover: store and sink must not be nil")
	}
	return recoverAll(ctx, st, sink, now, nil)
}

// recoverAll is Recover, counting into stats if not nil.
func recoverAll(ctx context.Context, ps PendingStore, sink Sink, now time.Time, stats *counters) (int, error) {
	done := 0
	var errs []error
	failed := make(map[Key]bool)
	for {
		// Records that failed stay pending and come back in every listing;
		// ask for that many more so a batch always has room for new ones.
		limit := recoverBatch + len(failed)
		recs, err := ps.Pending(ctx, now, limit)
		if err != nil {
			return done, errors.Join(append(errs, fmt.Errorf("ref: recover: pending: %w", err))...)
		}
		progress := false
		for _, r := range recs {
			if failed[r.Key] {
				continue
			}
			progress = true
			if err := complete(ctx, ps, sink, r, stats); err != nil {
				failed[r.Key] = true
				errs = append(errs, err)
				continue
			}
			done++
		}
		if !progress || len(recs) < limit {
			break
		}
	}
	return done, errors.Join(errs...)
}

func complete(ctx context.Context, st Store, sink Sink, r Record, stats *counters) error {
	fp := r.Key.Fingerprint()
	count := func(c int) {
		if stats != nil {
			stats.add(fp, c)
		}
	}
	if err := sink.Deliver(ctx, r.Key, r.Payload); err != nil {
		count(cErrors)
		return fmt.Errorf("ref: recover %v: deliver: %w", r.Key, err)
	}
	if err := st.Commit(ctx, r.Key, StateDelivered); err != nil {
		count(cErrors)
		return fmt.Errorf("ref: recover %v: commit: %w", r.Key, err)
	}
	count(cRecovered)
	return nil
}
