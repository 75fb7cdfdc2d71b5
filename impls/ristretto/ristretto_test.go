package ristretto

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/sharded"
	"github.com/onceproof/onceproof/ref"
)

func TestWindowExpiresInVirtualTime(t *testing.T) {
	w := NewWindow(time.Second, 64)
	defer w.Close()
	k := ref.Key{Hi: 9, Lo: 3}
	w.Mark(k, faults.Epoch)
	if !w.Seen(k, faults.Epoch.Add(time.Second-time.Nanosecond)) {
		t.Fatal("entry not seen inside its ttl")
	}
	if w.Seen(k, faults.Epoch.Add(time.Second)) {
		t.Fatal("entry seen at t+ttl: expiry must follow virtual time, not ristretto's clock")
	}
	if w.Seen(ref.Key{Hi: 9, Lo: 4}, faults.Epoch) {
		t.Fatal("a 64-bit collision was taken for a hit")
	}
}

// capture is the ristretto design that remembers its clusters, so a test
// can read their Stats after faults.Run.
type capture struct {
	Design
	clusters []*sharded.Cluster
}

func (c *capture) NewCluster() faults.Cluster {
	cl := c.Design.NewCluster().(*sharded.Cluster)
	c.clusters = append(c.clusters, cl)
	return cl
}

// TestStoreCatchesWhatTheCacheDrops runs duplicate-family schedules: every
// duplicate ack is counted once, by the cache or by the store (whatever the
// cache dropped), and the cache's catch rate is reported.
func TestStoreCatchesWhatTheCacheDrops(t *testing.T) {
	d := &capture{}
	for seed := range uint64(50) {
		s := faults.Generate(faults.Duplicate, seed)
		h := faults.Run(d, s, faults.RunOptions{})
		dups := 0
		for _, e := range h.Events {
			if e.Kind == faults.EvAck && e.Ack == faults.AckDuplicate {
				dups++
			}
		}
		st := d.clusters[len(d.clusters)-1].Stats()
		if int(st.WindowDup+st.StoreDup) != dups {
			t.Fatalf("seed %d: %d duplicate acks but window %d + store %d (to reproduce: go test ./impls/ristretto/ -run TestStoreCatchesWhatTheCacheDrops)", seed, dups, st.WindowDup, st.StoreDup)
		}
	}
	var total sharded.Stats
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
