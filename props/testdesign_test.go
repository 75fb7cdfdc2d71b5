package props

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/faults"
)

func TestKeyedDesignPassesTheKit(t *testing.T) {
	TestDesign(t, keyed{}, Dir(t.TempDir()))
}

func TestMemoDesignPassesTheFamiliesWhereItIsCorrect(t *testing.T) {
	TestDesign(t, memo{}, Dir(t.TempDir()), Families(faults.Clean, faults.Duplicate, faults.Late, faults.Crash), StrictExpectations())
}

// helperEnv runs one of the Helper tests below in a child process.
const helperEnv = "ONCEPROOF_PROPS_HELPER_DIR"

// TestHelperMemoMultiNode is not a test on its own: the tests below run it
// in a child process, where it must fail.
func TestHelperMemoMultiNode(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestTestDesignReportsAnUndeclaredFailure")
	}
	TestDesign(t, memo{}, Dir(dir), Families(faults.MultiNode), Properties(faults.NoDup, faults.NoLoss))
}

func runHelper(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMemoMultiNode$", "-test.v", "-rapid.nofailfile")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestTestDesignReportsAnUndeclaredFailure(t *testing.T) {
	dir := t.TempDir()
	out, err := runHelper(t, dir)
	if err == nil {
		t.Fatalf("TestDesign passed a design that credits retries on another node twice:\n%s", out)
	}
	for _, want := range []string{
		"--- FAIL: TestHelperMemoMultiNode/family=multi-node/prop=NoDup",
		"--- PASS: TestHelperMemoMultiNode/family=multi-node/prop=NoLoss",
		"was credited 2 times",
		"minimal schedule",
		"To reproduce (the saved file replays first): cd ",
		"go test -run '^TestHelperMemoMultiNode$/^family=multi-node$/^prop=NoDup$' .",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	file := filepath.Join(dir, "test-memo", "multi-node-NoDup.sched")
	text, rerr := os.ReadFile(file)
	if rerr != nil {
		t.Fatalf("the counterexample was not saved: %v", rerr)
	}
	sf, perr := ParseSchedFile(string(text))
	if perr != nil {
		t.Fatalf("saved counterexample does not parse: %v\n%s", perr, text)
	}
	if sf.Design != "test-memo" || len(sf.Fails) == 0 || sf.Fails[0] != faults.NoDup {
		t.Errorf("saved header: design %q fails %v; want test-memo, NoDup", sf.Design, sf.Fails)
	}
	if n := len(sf.Schedule.Deliveries); n > 4 {
		t.Errorf("the saved counterexample has %d deliveries; a minimal one needs 1 or 2 (and the sender's retry):\n%s", n, text)
	}

	// The second run replays the saved file first.
	out, err = runHelper(t, dir)
	if err == nil || !strings.Contains(out, "replayed from "+file) {
		t.Errorf("the second run did not replay %s first (err %v):\n%s", file, err, out)
	}
}
