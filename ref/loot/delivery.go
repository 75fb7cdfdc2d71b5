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
// instead of two per grant. A batch call that fails is done again grant by
// grant, through the same recorded numbers (DeliverBatch's contract: any
// subset may have landed, a redelivery applies none twice), so one grant
// an inventory refuses holds back only itself, as before batches.
func (s *Service) deliverAll(ctx context.Context, gs []Grant) []delivery {
	out := make([]delivery, len(gs))
	var done []int // indexes of gs delivered, to mark
	if s.binv != nil && s.binv.DeliverBatch(ctx, gs) == nil {
		for i := range gs {
			done = append(done, i)
		}
	} else {
		for i, g := range gs {
			if err := s.inv.Deliver(ctx, g); err != nil {
				out[i].rec, out[i].err = g, classify("deliver "+g.No, err)
				continue
			}
			done = append(done, i)
		}
	}
	if s.marker != nil && len(done) > 0 {
		nos := make([]string, len(done))
		for j, i := range done {
			nos[j] = gs[i].No
		}
		if recs, err := s.marker.MarkDeliveredBatch(ctx, nos); err == nil && sameNos(recs, nos) {
			for j, i := range done {
				out[i] = marked(gs[i], recs[j])
			}
			return out
		}
	}
	for _, i := range done {
		rec, err := s.store.MarkDelivered(ctx, gs[i].No)
		if err != nil {
			out[i] = delivery{rec: rec, err: classify("mark delivered "+gs[i].No, err)}
			continue
		}
		out[i] = marked(gs[i], rec)
	}
	return out
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
