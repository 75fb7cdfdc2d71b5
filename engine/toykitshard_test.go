package engine_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// TestToyKitShardChild is the child of TestKitShardFlagRunsEachFamilyOnce:
// keyed under every toy family, as the -onceproof.shard flag it is given
// splits them.
func TestToyKitShardChild(t *testing.T) {
	if os.Getenv("TOY_KIT_SHARD_CHILD") == "" {
		t.Skip("runs only as the child of TestKitShardFlagRunsEachFamilyOnce")
	}
	engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(t.TempDir()), engine.Schedules(toyN, 1))
}

// go test -onceproof.shard=i/3 in three processes runs each family's
// subtest in exactly one of them and skips it in the others; a bad value
// fails the test, naming the flag.
func TestKitShardFlagRunsEachFamilyOnce(t *testing.T) {
	const rerun = "go test -run '^TestKitShardFlagRunsEachFamilyOnce$' ./engine"
	family := regexp.MustCompile(`--- (PASS|SKIP): TestToyKitShardChild/(family=[^ /]+) `)
	ran := map[string]int{}
	seen := map[string]int{}
	for _, sh := range []string{"0/3", "1/3", "2/3"} {
		out, code := shardChild(t, sh)
		if code != 0 {
			t.Fatalf("shard %s failed (%s):\n%s", sh, rerun, out)
		}
		for _, m := range family.FindAllStringSubmatch(out, -1) {
			seen[m[2]]++
			if m[1] == "PASS" {
				ran[m[2]]++
			}
		}
	}
	if len(seen) != len(toyWorld.Columns()) {
		t.Errorf("the shards reported %d families, the toy world has %d (%s)", len(seen), len(toyWorld.Columns()), rerun)
	}
	for f, n := range seen {
		if n != 3 || ran[f] != 1 {
			t.Errorf("%s: reported by %d shards, run by %d; want 3 and 1 (%s)", f, n, ran[f], rerun)
		}
	}
	if out, code := shardChild(t, "3/3"); code == 0 || !regexp.MustCompile(`-onceproof.shard: shard "3/3"`).MatchString(out) {
		t.Errorf("-onceproof.shard=3/3: exit %d, want a failure naming the flag (%s):\n%s", code, rerun, out)
	}
}

func shardChild(t *testing.T, shard string) (string, int) {
	t.Helper()
	return testChild(t, []string{"-test.run=^TestToyKitShardChild$", "-test.v", "-onceproof.shard=" + shard}, "TOY_KIT_SHARD_CHILD=1")
}
