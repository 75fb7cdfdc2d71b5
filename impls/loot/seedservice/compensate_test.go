package seedservice

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTheCompensationTimerRedeliversAFailedGrantUnderItsKey: with the
// timer on, the PENDING grant a settle wrote is delivered without any
// request; the inventory's two refusals leave it PENDING, and the next
// passes deliver it again under the same grant number until it is
// applied once and marked SUCCESS.
func TestTheCompensationTimerRedeliversAFailedGrantUnderItsKey(t *testing.T) {
	s := startService(t, "--loot.compensate.interval-millis=200")
	const no, loot = "S202408", "GEM"
	s.openClaimed(no, loot, 51, "NEED")
	s.endClaimWindow(no)
	s.inv.failNext(2)
	st, body := s.post("/api/loot/settle", map[string]any{"sessionNo": no, "lootCode": loot})
	answer(t, "settle", st, body, 200, map[string]any{"message": "settle triggered"})
	key := no + ":51:" + loot
	// Passes every 200 ms: 60s is a bound on waiting, not a measurement.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if g := s.grants(no); len(g) == 1 && g[0].status == "SUCCESS" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("grant %s not SUCCESS within 60s of passes every 200ms: %v; reproduce: %s", key, s.grants(no), reproduce(t.Name()))
		}
	}
	if r, d := s.inv.refusedKeys(), s.inv.deliveries(); !slices.Equal(r, []string{key, key}) || len(d) != 1 || d[0].Key != key {
		t.Fatalf("inventory refused %v and applied %+v; want %s refused twice, then applied once; reproduce: %s", r, d, key, reproduce(t.Name()))
	}
}

// TestBadConfigurationExitsTwoWithOneLine: an unknown key, an argument
// not of the form --key=value and a value that is not a number each stop
// the service before it connects anywhere, with exit status 2 and one
// line naming the argument.
func TestBadConfigurationExitsTwoWithOneLine(t *testing.T) {
	dir := classes(t)
	for _, arg := range []string{"--loot.settle.lock-expire=1", "loot.settle.lock-expire-millis=1", "--spring.datasource.hikari.maximum-pool-size=many"} {
		out, err := exec.Command("java", "-cp", dir+":"+driverJar, "com.example.loot.LootApplication", arg).CombinedOutput()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		line := strings.TrimSpace(string(out))
		if code != 2 || strings.Count(line, "\n") != 0 || !strings.Contains(line, strings.SplitN(strings.TrimPrefix(arg, "--"), "=", 2)[0]) {
			t.Errorf("%s: exit %d (%v), output %q; want exit 2 and one line naming it; reproduce: %s", arg, code, err, out, reproduce(t.Name()))
		}
	}
}
