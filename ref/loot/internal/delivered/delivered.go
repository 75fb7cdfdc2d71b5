// Package delivered is the record a store keeps of the grants its own
// Inventory just delivered in a batch, so that the MarkDeliveredBatch
// loot.Service sends next (ref/loot/delivery.go) is answered with no
// round trip: a settle through delivery is then three round trips, not
// four (BeginSettle, RecordGrants, DeliverBatch). ref/loot/postgres and
// ref/loot/mysql keep one each.
//
// It is correct because a store's DeliverBatch reads back the grants it
// marked, SUCCESS, under the row locks it took, and a SUCCESS grant never
// changes again (LeaseGrants leases only PENDING grants, MarkDelivered and
// the Inventory only write PENDING -> SUCCESS, and nothing deletes a
// grant): what it held is what a read of it would return for ever after.
// A batch with any number not held is marked by the store's statement, as
// before.
package delivered

import (
	"sync"

	"github.com/onceproof/onceproof/ref/loot"
)

// Record holds delivered grants by number. The zero value is empty and
// ready; safe for concurrent use.
type Record struct {
	mu sync.Mutex
	m  map[string]loot.Grant
}

// Max bounds a Record: a DeliverBatch whose caller never marks (the
// Inventory used without the Service) leaves its grants here; when it is
// full it is emptied, which only sends the next marks to the database.
// 4096 is 64 concurrent settlers (the benchmarks' most) times 64 grants
// each, the largest batch the benchmarks send.
const Max = 4096

// Put holds gs, each as its store's DeliverBatch read it back.
func (d *Record) Put(gs []loot.Grant) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil || len(d.m)+len(gs) > Max {
		d.m = make(map[string]loot.Grant, len(gs))
	}
	for _, g := range gs {
		d.m[g.No] = g
	}
}

// Take returns the grants nos, in order (a number repeated at each of its
// places), and forgets them, if it holds every one of them; otherwise it
// returns false and keeps what it holds.
func (d *Record) Take(nos []string) ([]loot.Grant, bool) {
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
