package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// killPoints are the steps of one Settle in order: the lock taken, the CAS
// won, the fairness read (the last moment before the result is written:
// CLOSED comes with the grants in one statement), the grants recorded,
// then each grant delivered by the Inventory and marked.
var killPoints = []string{
	"after-lock", "after-cas", "before-record", "after-record",
	"after-deliver-1", "after-mark-1", "after-deliver-2", "after-mark-2",
}

// afterKill is what a settler killed at point leaves of a session of 2
// items: its status and fence, and how many grants are delivered.
func afterKill(point string) (loot.Status, loot.Fence, int, int) {
	switch {
	case point == "after-lock":
		return loot.StatusClaiming, 0, 0, 0
	case point == "after-cas" || point == "before-record":
		return loot.StatusSettling, 1, 0, 0
	case point == "after-record":
		return loot.StatusClosed, 1, 2, 0
	case strings.HasSuffix(point, "-1"):
		return loot.StatusClosed, 1, 2, 1
	}
	return loot.StatusClosed, 1, 2, 2
}

// TestKillNineAtEveryStep: a settler process is SIGKILLed at each step of
// a Settle. The database holds exactly what the step says (the kill aborts
// an open transaction); a fresh process's Recover leaves it alone while
// the dead settler's lease runs (database clock), and once it ended
// completes it: every winner's item applied exactly once, nothing SETTLING.
func TestKillNineAtEveryStep(t *testing.T) {
	const quantity = 2
	for _, point := range killPoints {
		t.Run("point="+point, func(t *testing.T) {
			w := newWorld(t, true)
			w.claiming("S-1", quantity, team(3), time.Minute)
			w.advance(time.Minute)
			cfg := w.cfg("settle", "S-1")
			cfg.Stop = point
			c := startChild(t, cfg)
			c.waitLine("stopped " + point)
			c.kill(w.pool)
			st, fence, grants, delivered := afterKill(point)
			s := w.state("S-1")
			if s.status != st || s.fence != fence || len(s.grants) != grants || s.delivered() != delivered || len(s.effects) != delivered {
				t.Fatalf("after SIGKILL at %s: %v; want %s fence %d with %d grants, %d delivered", point, s, st, fence, grants, delivered)
			}
			if point != "after-lock" { // before the CAS there is no lease: Recover may settle at once
				rc := w.cfg("recover", "S-1")
				rc.Rounds = 1
				startChild(t, rc).finish()
				if again := w.state("S-1"); again.String() != s.String() {
					t.Fatalf("a Recover while the dead settler's lease runs changed %v into %v", s, again)
				}
			}
			w.advance(cfg.Lease) // the settle lease and the grants' first lease end
			startChild(t, w.cfg("recover", "S-1")).finish()
			w.checkExactlyOnce("S-1", quantity)
			w.checkNoneSettling()
		})
	}
}

// TestKillNineAtRandomMoments: a settler of 12 sessions on 3 goroutines is
// SIGKILLed after a seeded number of steps and a seeded delay, so the
// kill lands anywhere (inside a transaction, between a delivery and its
// mark, between two workers' writes, inside a batch of several settlers'
// writes: odd seeds run the store and the lock with Options.Batch);
// Recover from a fresh process then completes every session exactly
// once. The seed fixes the choices; where the kill lands still depends on
// scheduling.
func TestKillNineAtRandomMoments(t *testing.T) {
	const sessions, quantity = 12, 2
	for _, seed := range []uint64{1, 2, 3} {
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
			cfg.Workers, cfg.Batch = 3, seed%2 == 1
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
			startChild(t, w.cfg("recover", nos...)).finish()
			for _, no := range nos {
				w.checkExactlyOnce(no, quantity)
			}
			w.checkNoneSettling()
		})
	}
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
