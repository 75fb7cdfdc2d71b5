package mysql

import (
	"sync"

	"github.com/onceproof/onceproof/ref/loot"
)

// delivered holds the grants the Store's own Inventory last delivered in
// a batch, as DeliverBatch's transaction read them back: SUCCESS, under
// the row locks it took. A SUCCESS grant never changes again (LeaseGrants
// leases only PENDING grants, MarkDelivered and the Inventory only write
// PENDING -> SUCCESS, and nothing deletes a grant), so the record is what
// a read of it would return for ever after. The MarkDeliveredBatch that
// follows a DeliverBatch in loot.Service (ref/loot/delivery.go) is
// answered from it with no round trip: a settle through delivery is then
// three round trips, not four (BeginSettle, RecordGrants, DeliverBatch).
// A batch with any number not held here is marked by its statement, as
// before. ref/loot/postgres's delivered is the same record for the same
// reason.
type delivered struct {
	mu sync.Mutex
	m  map[string]loot.Grant
}

// maxDelivered bounds delivered: a DeliverBatch whose caller never marks
// (the Inventory used without the Service) leaves its grants here; when
// it is full it is emptied, which only sends the next marks to the
// database. 4096 is 64 concurrent settlers (the benchmarks' most) times
// 64 grants each, the largest batch the benchmarks send.
const maxDelivered = 4096

// put holds gs.
func (d *delivered) put(gs []loot.Grant) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil || len(d.m)+len(gs) > maxDelivered {
		d.m = make(map[string]loot.Grant, len(gs))
	}
	for _, g := range gs {
		d.m[g.No] = g
	}
}

// take returns the grants nos, in order, and forgets them, if it holds
// every one of them; otherwise it returns false and keeps what it holds.
func (d *delivered) take(nos []string) ([]loot.Grant, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]loot.Grant, len(nos))
	for i, no := range nos {
		g, ok := d.m[no]
		if !ok {
			return nil, false
		}
		out[i] = g
	}
	for _, no := range nos {
		delete(d.m, no)
	}
	return out, true
}
