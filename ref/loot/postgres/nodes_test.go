package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestThreeServiceProcessesSettleAndCompensate: three service instances,
// each its own process with its own pool and Redis client, settle and
// compensate the same nine sessions at once as their deadlines pass
// (database clock, real time), through an inventory that times out on a
// third of the deliveries (half of them after the item landed); the
// third process runs the store and the lock with Options.Batch. One
// process is SIGKILLed holding a session it won the CAS for. The two left
// take that session over and finish: every session CLOSED, each winner's
// item applied exactly once, nothing SETTLING.
//
// The process to be killed starts alone and the other two start once it
// stopped holding its first CAS: started together, it lost all nine CAS
// races to them now and then (about (2/3)^9 = 2.6% of runs if the wins
// fall evenly; seen on a loaded machine) and was never there to kill.
func TestThreeServiceProcessesSettleAndCompensate(t *testing.T) {
	const sessions, quantity = 9, 2
	w := newWorld(t, false)
	var nos []string
	for i := range sessions {
		no := fmt.Sprintf("N-%d", i)
		// Deadlines 300ms to 1.1s away: sessions come due while the nodes run.
		w.claiming(no, quantity, team(4), 300*time.Millisecond+time.Duration(i)*100*time.Millisecond)
		nos = append(nos, no)
	}
	var (
		nodes  []*child
		victim string
	)
	for i := range 3 {
		cfg := w.cfg("node", nos...)
		cfg.Flaky, cfg.Seed, cfg.Batch = 0.3, uint64(i+1), i == 2
		if i == 0 {
			cfg.Stop = "before-record" // the first session it wins the CAS of
		}
		nodes = append(nodes, startChild(t, cfg))
		if i == 0 {
			victim = strings.Fields(nodes[0].waitLine("stopped "))[2]
		}
	}
	nodes[0].kill(w.pool)
	lines := nodes[0].printed()
	for _, n := range nodes[1:] {
		lines = append(lines, n.finish()...)
	}
	var retries int
	for _, l := range lines {
		if strings.Contains(l, "outcome unknown") {
			retries++
		}
	}
	if retries == 0 {
		t.Error("no delivery failed: the flaky inventory no longer forces compensation")
	}
	takeovers := 0
	for _, no := range nos {
		if s := w.checkExactlyOnce(no, quantity); s.fence > 1 {
			takeovers++
		}
	}
	w.checkNoneSettling()
	if s := w.state(victim); s.fence < 2 {
		t.Errorf("%s, held by the killed process: %v; want it taken over (fence >= 2)", victim, s)
	}
	t.Logf("%d failed deliveries retried, %d of %d sessions taken over from a dead or slow settler", retries, takeovers, sessions)
}
