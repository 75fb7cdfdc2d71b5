package ref

import "sync/atomic"

// SettlerStats counts where duplicates were caught and what went wrong.
type SettlerStats struct {
	Granted    int // first time a key was seen: this Settler delivered it
	WindowDup  int // retry caught by the in-memory window (fast path)
	StoreDup   int // retry caught by the durable constraint (window had expired or never saw it)
	Completed  int // StateGranted record found by a retry and completed through the sink
	Recovered  int // StateGranted record completed by Recover
	Errors     int // store or sink failures returned to the caller (the sender retries)
	Collisions int // window hits whose other 64 key bits differed: sent on to the store
}

// statStripes spreads the counters over cache lines so that goroutines
// settling different fingerprints do not contend on one atomic. 16 stripes
// covers the cores a settler node runs on; more only costs Stats() time.
const statStripes = 16

const (
	cGranted = iota
	cWindowDup
	cStoreDup
	cCompleted
	cRecovered
	cErrors
	cCollisions
	nCounters
)

// statStripe is one cache line (8 counters x 8 bytes = 64 bytes) of counters.
type statStripe struct {
	c [8]atomic.Int64
}

type counters struct {
	stripes [statStripes]statStripe
}

// add counts one event; fp picks the stripe so the same key always counts in
// the same line and distinct keys rarely share one. No lock: an atomic add.
func (c *counters) add(fp Fingerprint, counter int) {
	c.stripes[uint64(fp)%statStripes].c[counter].Add(1)
}

func (c *counters) snapshot() SettlerStats {
	var sum [nCounters]int
	for i := range c.stripes {
		for j := 0; j < nCounters; j++ {
			sum[j] += int(c.stripes[i].c[j].Load())
		}
	}
	return SettlerStats{
		Granted: sum[cGranted], WindowDup: sum[cWindowDup], StoreDup: sum[cStoreDup],
		Completed: sum[cCompleted], Recovered: sum[cRecovered], Errors: sum[cErrors],
		Collisions: sum[cCollisions],
	}
}
