package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// killPoints are the steps of one Settle in order, on each delivery path
// (childConfig.Inv): the lock taken, the CAS won, the fairness read (the
// last moment before the result is written: CLOSED comes with the grants
// in one statement), the grants recorded, then the delivery. One grant at
// a time: each grant delivered by the Inventory and marked. invBatch: one
// DeliverBatch, inside it each grant's transaction with its Effect applied
// and not yet committed, then the batch returned, then one
// MarkDeliveredBatch. invLedger: one DeliverBatch statement, then one
// MarkDeliveredBatch.
var killPoints = map[string][]string{
	"": {"after-lock", "after-cas", "before-record", "after-record",
		"after-deliver-1", "after-mark-1", "after-deliver-2", "after-mark-2"},
	invBatch: {"after-lock", "after-cas", "before-record", "after-record",
		"in-deliver-1", "in-deliver-2", "after-deliver-batch", "after-mark-batch"},
	invLedger: {"after-lock", "after-cas", "before-record", "after-record",
		"after-deliver-batch", "after-mark-batch"},
}

// afterKill is what a settler killed at point leaves of a session of 2
// items: its status and fence, how many grants are recorded, and how many
// delivered (SUCCESS, their items applied). The Store's Inventory marks a
// grant SUCCESS in the transaction that applies it, so delivered counts
// both; a kill inside a grant's transaction (in-deliver-N) aborts it, so
// only the N-1 grants before it are delivered.
func afterKill(point string) (loot.Status, loot.Fence, int, int) {
	switch {
	case point == "after-lock":
		return loot.StatusClaiming, 0, 0, 0
	case point == "after-cas" || point == "before-record":
		return loot.StatusSettling, 1, 0, 0
	case point == "after-record" || point == "in-deliver-1":
		return loot.StatusClosed, 1, 2, 0
	case strings.HasSuffix(point, "-1") || point == "in-deliver-2":
		return loot.StatusClosed, 1, 2, 1
	}
	return loot.StatusClosed, 1, 2, 2
}

// invName names a delivery path in subtest names.
func invName(inv string) string {
	if inv == "" {
		return "one"
	}
	return inv
}

// TestKillNineAtEveryStep: a settler process is SIGKILLed at each step of
// a Settle, on each delivery path. The database holds exactly what the
// step says (the kill aborts an open transaction); a fresh process's
// Recover (on the same path) leaves it alone while the dead settler's
// lease runs (database clock), and once it ended completes it: every
// winner's item applied exactly once, nothing SETTLING.
func TestKillNineAtEveryStep(t *testing.T) {
	const quantity = 2
	for _, inv := range []string{"", invBatch, invLedger} {
		for _, point := range killPoints[inv] {
			t.Run("inv="+invName(inv)+"/point="+point, func(t *testing.T) {
				w := newWorld(t, true)
				w.claiming("S-1", quantity, team(3), time.Minute)
				w.advance(time.Minute)
				cfg := w.cfg("settle", "S-1")
				cfg.Stop, cfg.Inv = point, inv
				c := startChild(t, cfg)
				c.waitLine("stopped " + point)
				c.kill(w.pool)
				st, fence, grants, delivered := afterKill(point)
				s := w.state("S-1")
				if s.status != st || s.fence != fence || len(s.grants) != grants || s.delivered() != delivered || s.applied(inv) != delivered {
					t.Fatalf("after SIGKILL at %s: %v; want %s fence %d with %d grants, %d delivered; reproduce: go test -count=1 -run '%s' ./ref/loot/postgres",
						point, s, st, fence, grants, delivered, t.Name())
				}
				if point != "after-lock" { // before the CAS there is no lease: Recover may settle at once
					rc := w.cfg("recover", "S-1")
					rc.Rounds, rc.Inv = 1, inv
					startChild(t, rc).finish()
					if again := w.state("S-1"); again.String() != s.String() {
						t.Fatalf("a Recover while the dead settler's lease runs changed %v into %v; reproduce: go test -count=1 -run '%s' ./ref/loot/postgres",
							s, again, t.Name())
					}
				}
				w.advance(cfg.Lease) // the settle lease and the grants' first lease end
				rc := w.cfg("recover", "S-1")
				rc.Inv = inv
				startChild(t, rc).finish()
				w.checkDeliveredOnce("S-1", quantity, inv)
				w.checkNoneSettling()
			})
		}
	}
}

// TestKillNineAtRandomMoments: a settler of 12 sessions on 3 goroutines is
// SIGKILLed after a seeded number of steps and a seeded delay, so the
// kill lands anywhere (inside a transaction, between a delivery and its
// mark, between two workers' writes, inside a batch of several settlers'
// writes: odd seeds run the store and the lock with Options.Batch; in a
// DeliverBatch or between it and its MarkDeliveredBatch: seeds 4-7 deliver
// in batches, see randomInv); Recover from a fresh process, on the same
// delivery path, then completes every session exactly once. The seed fixes the choices; where the kill lands still depends on
// scheduling.
func TestKillNineAtRandomMoments(t *testing.T) {
	const sessions, quantity = 12, 2
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x6b696c6c))
			steps := rng.IntN(sessions * 6) // a Settle passes 8 steps
			delay := time.Duration(rng.IntN(3000)) * time.Microsecond
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("kill after %d steps + %v; reproduce: go test -race -count=1 -run '%s' ./ref/loot/postgres", steps, delay, t.Name())
				}
			})
			w := newWorld(t, true)
			var nos []string
			for i := range sessions {
				no := fmt.Sprintf("R-%d", i)
				w.claiming(no, quantity, team(3), time.Minute)
				nos = append(nos, no)
			}
			w.advance(time.Minute)
			cfg := w.cfg("settle", nos...)
			cfg.Workers, cfg.Batch, cfg.Inv = 3, seed%2 == 1, randomInv(seed)
			c := startChild(t, cfg)
			if c.countLines("at ", steps) {
				time.Sleep(delay)
				c.kill(w.pool)
				closed := 0
				for _, no := range nos {
					if w.state(no).status == loot.StatusClosed {
						closed++
					}
				}
				t.Logf("killed after %d steps + %v: %d of %d sessions CLOSED", steps, delay, closed, sessions)
			} else {
				c.finish()
				t.Logf("the settler finished before step %d: checking a clean run", steps)
			}
			w.advance(cfg.Lease)
			rc := w.cfg("recover", nos...)
			rc.Inv = cfg.Inv
			startChild(t, rc).finish()
			for _, no := range nos {
				w.checkDeliveredOnce(no, quantity, cfg.Inv)
			}
			w.checkNoneSettling()
		})
	}
}

// randomInv is the delivery path of TestKillNineAtRandomMoments' seed:
// seeds 1-3 one grant at a time (as before batches), 4 and 5 invBatch, 6
// and 7 invLedger: with the odd seeds' Options.Batch, each batch path runs
// with the store batched and not.
func randomInv(seed uint64) string {
	switch {
	case seed <= 3:
		return ""
	case seed <= 5:
		return invBatch
	}
	return invLedger
}

// countLines waits for n lines starting with prefix; false if the child
// said "done" first.
func (c *child) countLines(prefix string, n int) bool {
	c.t.Helper()
	for seen := 0; seen < n; {
		line := c.waitLine("")
		switch {
		case strings.HasPrefix(line, prefix):
			seen++
		case line == "done":
			return false
		}
	}
	return true
}
