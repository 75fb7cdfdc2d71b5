package loot

import "context"

// delivery is one grant's outcome in deliverAll. mine reports whether
// the delivery is this caller's to count: the grant came back SUCCESS with
// the attempt count of the lease this caller held, so no later lease was
// taken on it. Each lease has its own count and only PENDING grants are
// leased, so of everyone who delivers a grant exactly the holder of its
// last lease counts it (none, if that holder fails after another delivered
// it: counts may fall short, never double). Whether MarkDelivered moved
// the grant cannot tell: a same-database Inventory marks it SUCCESS inside
// Deliver.
type delivery struct {
	rec  Grant
	mine bool
	err  error
}

// deliverAll delivers gs (each as this caller's lease handed it over: the
// settler's Decision, Attempts 0; LeaseGrants, one more attempt per
// lease) through the Inventory with its recorded number, never a new one, and marks them SUCCESS, with one outcome per grant in gs's
// order. With a BatchInventory the whole batch is one DeliverBatch, and
// with a BatchMarker Store the delivered grants are one MarkDeliveredBatch:
// a settle's delivery is then two round trips whatever its quantity,
// instead of two per grant. Without a BatchInventory each grant is
// delivered and marked before the next, as before batches. A DeliverBatch
// that fails is done again that way, through the same recorded numbers
// (its contract: any subset may have landed, a redelivery applies none
// twice), so one grant an inventory refuses holds back only itself.
func (s *Service) deliverAll(ctx context.Context, gs []Grant) []delivery {
	out := make([]delivery, len(gs))
	if len(gs) == 0 {
		return out // a settle without winners: no call at all, as before batches
	}
	if s.binv == nil || s.binv.DeliverBatch(ctx, gs) != nil {
		for i, g := range gs {
			out[i] = s.deliver(ctx, g)
		}
		return out
	}
	if s.marker != nil {
		nos := make([]string, len(gs))
		for i, g := range gs {
			nos[i] = g.No
		}
		if recs, err := s.marker.MarkDeliveredBatch(ctx, nos); err == nil && sameNos(recs, nos) {
			for i, g := range gs {
				out[i] = marked(g, recs[i])
			}
			return out
		}
	}
	for i, g := range gs {
		out[i] = s.mark(ctx, g)
	}
	return out
}

// deliver delivers one grant through the Inventory, then marks it: the
// one-grant path, each grant delivered and marked before the next.
func (s *Service) deliver(ctx context.Context, g Grant) delivery {
	if err := s.inv.Deliver(ctx, g); err != nil {
		return delivery{rec: g, err: classify("deliver "+g.No, err)}
	}
	return s.mark(ctx, g)
}

// mark marks one delivered grant SUCCESS.
func (s *Service) mark(ctx context.Context, g Grant) delivery {
	rec, err := s.store.MarkDelivered(ctx, g.No)
	if err != nil {
		return delivery{rec: rec, err: classify("mark delivered "+g.No, err)}
	}
	return marked(g, rec)
}

// marked is the outcome of grant g once the store recorded it as rec.
// mine: rec came back SUCCESS with g's attempt count, so no later lease
// was taken on it (see deliver).
func marked(g, rec Grant) delivery {
	return delivery{rec: rec, mine: rec.Status == GrantSuccess && rec.Attempts == g.Attempts}
}

// sameNos reports whether recs are the grants nos, in order: a batch
// answer that is not falls back to marking grant by grant.
func sameNos(recs []Grant, nos []string) bool {
	if len(recs) != len(nos) {
		return false
	}
	for i, r := range recs {
		if r.No != nos[i] {
			return false
		}
	}
	return true
}
