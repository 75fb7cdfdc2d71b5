package ristretto

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
)

func TestWindowExpiresInVirtualTime(t *testing.T) {
	w := NewWindow(time.Second, 64)
	defer w.Close()
	w.Put(9, 3, faults.Epoch)
	if v, ok := w.Lookup(9, faults.Epoch.Add(time.Second-time.Nanosecond)); !ok || v != 3 {
		t.Fatalf("entry inside its ttl: (%d, %v), want (3, true)", v, ok)
	}
	if _, ok := w.Lookup(9, faults.Epoch.Add(time.Second)); ok {
		t.Fatal("entry seen at t+ttl: expiry must follow virtual time, not ristretto's clock")
	}
}

// capture is the ristretto design that remembers its clusters, so a test
// can read their Stats after faults.Run.
type capture struct {
	Design
	clusters []*Cluster
}

func (c *capture) NewCluster() faults.Cluster {
	cl := c.Design.NewCluster().(*Cluster)
	c.clusters = append(c.clusters, cl)
	return cl
}

// TestStoreCatchesWhatTheCacheDrops runs duplicate-family schedules: every
// duplicate ack is counted once, by the cache or by the store (whatever the
// cache dropped), and the cache's catch rate is reported.
func TestStoreCatchesWhatTheCacheDrops(t *testing.T) {
	d := &capture{}
	for seed := range uint64(50) {
		s := faults.World.Generate(faults.Families.Duplicate, seed)
		h := faults.Run(d, s, faults.RunOptions{})
		dups := 0
		for _, e := range h.Events {
			if e.Kind == engine.EvAck && e.Ack == faults.AckDuplicate {
				dups++
			}
		}
		st := d.clusters[len(d.clusters)-1].Stats()
		if int(st.WindowDup+st.StoreDup) != dups {
			t.Fatalf("seed %d: %d duplicate acks but window %d + store %d (to reproduce: go test ./impls/ristretto/ -run TestStoreCatchesWhatTheCacheDrops)", seed, dups, st.WindowDup, st.StoreDup)
		}
	}
	var total refdesign.Stats // the embedded refdesign.Cluster's counters
	for _, c := range d.clusters {
		st := c.Stats()
		total.WindowDup += st.WindowDup
		total.StoreDup += st.StoreDup
		total.Granted += st.Granted
	}
	if total.WindowDup+total.StoreDup == 0 {
		t.Fatal("50 duplicate-family schedules produced no duplicate: the test measures nothing")
	}
	t.Logf("ristretto window catch rate over 50 duplicate schedules: %.1f%% (window %d, store %d, granted %d)",
		100*total.CatchRate(), total.WindowDup, total.StoreDup, total.Granted)
}
