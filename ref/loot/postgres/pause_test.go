package postgres_test

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPausedSettlerIsFencedOff: a settler process is SIGSTOPped at a step
// and stays stopped past its lock's ttl (Redis's clock) and its leases
// (the database's), while a fresh process's Recover takes the session
// over or compensates its grants; then SIGCONT. The woken settler goes on
// from where it was, with its old fence: it records nothing (before its
// result: ErrStaleFence, the takeover's result stands) or repeats
// deliveries the Inventory already made (after it: no-ops by grant
// number). Each winner's item is applied exactly once, before and after
// it wakes.
func TestPausedSettlerIsFencedOff(t *testing.T) {
	const quantity = 2
	for _, tc := range []struct {
		point  string
		fence  int    // the fence on record once the other process finished
		result string // what the woken settler's Settle returns
	}{
		{"before-record", 2, "stale fence"},
		{"after-record", 1, "ok"},
		{"after-deliver-1", 1, "ok"},
	} {
		t.Run("point="+tc.point, func(t *testing.T) {
			w := newWorld(t, true)
			w.claiming("S-1", quantity, team(3), time.Minute)
			w.advance(time.Minute)
			cfg := w.cfg("settle", "S-1")
			cfg.Stop, cfg.Pause = tc.point, true
			a := startChild(t, cfg)
			a.waitLine("stopped " + tc.point)
			a.signal(syscall.SIGSTOP)
			time.Sleep(cfg.Lease + 100*time.Millisecond) // the lock's ttl ends in Redis
			w.advance(cfg.Lease)                         // the settle lease and the grants' first lease end
			startChild(t, w.cfg("recover", "S-1")).finish()
			if s := w.checkExactlyOnce("S-1", quantity); int(s.fence) != tc.fence {
				t.Fatalf("while the settler was stopped: %v; want fence %d", s, tc.fence)
			}
			if a.saw("resumed ") {
				t.Fatal("the settler went on before SIGCONT")
			}
			a.signal(syscall.SIGCONT)
			lines := a.finish()
			if got := settled(lines, "S-1"); got != tc.result {
				t.Fatalf("the woken settler's Settle = %q, want %q; output:\n%s", got, tc.result, strings.Join(lines, "\n"))
			}
			w.checkExactlyOnce("S-1", quantity)
			w.checkNoneSettling()
		})
	}
}

// saw reports whether the child printed a line starting with prefix so far
// (without waiting).
func (c *child) saw(prefix string) bool {
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				return false
			}
			if strings.HasPrefix(line, prefix) {
				return true
			}
		default:
			return false
		}
	}
}

// settled returns the outcome a settle child printed for session no.
func settled(lines []string, no string) string {
	for _, l := range lines {
		if rest, ok := strings.CutPrefix(l, "settled "+no+" "); ok {
			return rest
		}
	}
	return ""
}
