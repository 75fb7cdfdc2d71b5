package props

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// raceSkipped are the tests that skip under the race detector (skipUnderRace):
// each runs long-history's deep schedule (100,000 settlements) on one
// goroutine, where the detector has no race to find and multiplies the
// CPU the four take by about 6. `make test` runs them again without it (the Makefile's
// NORACE_PROPS), so every test still runs in `make test`, and
// TestMakefileRunsTheRaceSkippedTests holds the two lists together.
var raceSkipped = []string{
	"TestKitFailsAStoreCappedAt2048PerPlayer",
	"TestKitFailsAStoreThatForgetsPast4096Settlements",
	"TestKitFailsAFingerprintKeptTo20Bits",
	"TestKitFailsAFingerprintCutTo24To32Bits",
}

// skipUnderRace skips t under the race detector; t must be listed in
// raceSkipped.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if !slices.Contains(raceSkipped, t.Name()) {
		t.Fatalf("%s skips under -race but is not in raceSkipped, so make test's non-race pass would not run it (props/deep_test.go)", t.Name())
	}
	if raceEnabled {
		t.Skip("a deep single-goroutine schedule: make test runs it without -race (go test ./props -run " + t.Name() + ")")
	}
}

func TestMakefileRunsTheRaceSkippedTests(t *testing.T) {
	b, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^NORACE_PROPS = (.+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatal("../Makefile has no NORACE_PROPS = <-run pattern> line: make test would never run the tests that skip under -race (raceSkipped)")
	}
	pattern := strings.ReplaceAll(strings.TrimSpace(string(m[1])), "$$", "$") // make's escape
	re, err := regexp.Compile(pattern)
	if err != nil {
		t.Fatalf("the Makefile's NORACE_PROPS %q: %v", pattern, err)
	}
	for _, name := range raceSkipped {
		if !re.MatchString(name) {
			t.Errorf("the Makefile's NORACE_PROPS %q does not match %s, which skips under -race: make test would never run it (go test ./props -run TestMakefileRunsTheRaceSkippedTests)", pattern, name)
		}
	}
}
