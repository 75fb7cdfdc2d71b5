package loot

import (
	"context"
	"errors"
)

// Recovered is what Recover did.
type Recovered struct {
	// Settled counts sessions this call settled (overdue or taken over).
	Settled int
	// Delivered counts grants this call delivered (with those sessions'
	// own grants) under the lease it held, as Settlement.Delivered: a
	// pass that stalled while another delivered its grants counts none.
	Delivered int
}

// Recover is the compensation pass. Run it when a node starts and
// periodically on every node; concurrent Recovers are safe.
//
//  1. Sessions Overdue lists (CLAIMING past the deadline that nobody
//     settled; SETTLING whose settler's lease ended) are settled through
//     Settle: a takeover gets a new fence, so the old settler, if it
//     wakes, is refused.
//  2. PENDING grants are leased (LeaseGrants: one holder per lease, the
//     lease growing with the attempt count) and delivered through the
//     Inventory with their recorded grant number, never a new one, then
//     marked SUCCESS.
//
// Each step repeats in batches while a batch was full and made progress.
// Refusals that mean someone else has it in hand (ErrAlreadySettling,
// ErrAlreadySettled, ErrCanceled, ErrNotDue) are not errors; the rest are
// returned joined, and what they left is picked up by a later Recover.
func (s *Service) Recover(ctx context.Context) (Recovered, error) {
	var (
		out  Recovered
		errs []error
	)
	for {
		nos, err := s.store.Overdue(ctx, s.batch)
		if err != nil {
			errs = append(errs, classify("recover: overdue", err))
			break
		}
		progress := false
		for _, no := range nos {
			st, err := s.Settle(ctx, no)
			out.Delivered += st.Delivered
			switch {
			case err == nil:
				out.Settled++
				progress = true
			case st.Session.Status == StatusClosed:
				out.Settled++ // recorded; some deliveries left to step 2
				progress = true
				errs = append(errs, err)
			case !isSettled(err):
				errs = append(errs, err)
			}
		}
		if !progress || len(nos) < s.batch {
			break
		}
	}
	for {
		gs, err := s.store.LeaseGrants(ctx, s.batch, s.backoff)
		if err != nil {
			errs = append(errs, classify("recover: lease grants", err))
			break
		}
		progress := false
		for _, r := range s.deliverAll(ctx, gs) {
			if r.err != nil {
				errs = append(errs, r.err)
				continue
			}
			if r.mine {
				out.Delivered++
			}
			progress = true
		}
		if !progress || len(gs) < s.batch {
			break
		}
	}
	return out, errors.Join(errs...)
}
