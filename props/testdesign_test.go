package props

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

func TestKeyedDesignPassesTheKit(t *testing.T) {
	TestDesign(t, keyed, Dir(t.TempDir()))
}

func TestMemoDesignPassesTheFamiliesWhereItIsCorrect(t *testing.T) {
	TestDesign(t, memo, Dir(t.TempDir()), Families(faults.Families.Clean, faults.Families.Duplicate, faults.Families.Late, faults.Families.Crash), StrictExpectations())
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
	TestDesign(t, memo, Dir(dir), Families(faults.Families.MultiNode), Properties(faults.Properties.NoDup, faults.Properties.NoLoss))
}

// TestHelperFalseDeclaration is run in a child process, where it must fail:
// keyed declares a failure it does not have.
func TestHelperFalseDeclaration(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestStrictExpectationsFailsADeclaredFailureThatDoesNotShow")
	}
	TestDesign(t, falselyDeclared, Dir(dir), Families(faults.Families.Clean), StrictExpectations())
}

// TestHelperNeverAcks is run in a child process, where it must fail: with
// an event budget of 10, every run exhausts it before it drains.
func TestHelperNeverAcks(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestTestDesignFailsWhenEveryRunIsUnknown")
	}
	TestDesign(t, keyed, Dir(dir), Families(faults.Families.Clean), Properties(faults.Properties.NoDup), RunOptions(faults.RunOptions{MaxEvents: 10}))
}

// falselyDeclared is keyed declaring a failure it does not have.
var falselyDeclared = faultstest.As("test-keyed", faultstest.Keyed{}, faults.Declaration{Fails: []faults.Expect{{
	Families: []faults.Family{faults.Families.Clean}, Props: []faults.Property{faults.Properties.NoDup}, Why: "a declaration the design does not deserve"}}})

func TestStrictExpectationsFailsADeclaredFailureThatDoesNotShow(t *testing.T) {
	out, err := runNamedHelper(t, "TestHelperFalseDeclaration", t.TempDir())
	want := "test-keyed declares that NoDup fails under clean, but no failure showed"
	if err == nil || !strings.Contains(out, want) || !strings.Contains(out, "--- FAIL: TestHelperFalseDeclaration/family=clean/prop=NoDup") {
		t.Errorf("want a failing NoDup subtest saying %q (err %v):\n%s", want, err, out)
	}
}

func TestTestDesignFailsWhenEveryRunIsUnknown(t *testing.T) {
	out, err := runNamedHelper(t, "TestHelperNeverAcks", t.TempDir())
	want := "NoDup is unknown under clean: 200 of 200 runs could not be judged"
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("want a failure saying %q (err %v):\n%s", want, err, out)
	}
}

func runHelper(t *testing.T, dir string) (string, error) {
	t.Helper()
	return runNamedHelper(t, "TestHelperMemoMultiNode", dir)
}

func runNamedHelper(t *testing.T, name, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^" + name + "$", "-test.v"}, args...)...)
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
		"go test -run '^TestHelperMemoMultiNode$/^family=multi-node$/^prop=NoDup$' -onceproof.seed=1 -onceproof.n=200 .",
		"events:", // the counterexample's timeline, as in the counterexample files
		"!! NoDup: s",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// One command reproduces it; rapid's own lines and fail files stay out.
	for _, unwanted := range []string{"[rapid]", "rapid.seed", "rapid.failfile"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q:\n%s", unwanted, out)
		}
	}
	if n := strings.Count(out, "To reproduce"); n != 1 {
		t.Errorf("%d reproduce commands, want 1:\n%s", n, out)
	}
	if _, err := os.Stat(filepath.Join("testdata", "rapid")); err == nil {
		t.Errorf("a testdata/rapid directory appeared in the package")
	}
	if md, err := os.ReadFile(filepath.Join(dir, "test-memo", "multi-node-NoDup.md")); err != nil ||
		!strings.Contains(string(md), "```mermaid") || !strings.Contains(string(md), "go test -run '^TestHelperMemoMultiNode$/^family=multi-node$/^prop=NoDup$' -onceproof.seed=1 -onceproof.n=200 .") {
		t.Errorf("the timeline and diagram were not saved beside the .sched (%v):\n%s", err, md)
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
	if sf.Design != "test-memo" || len(sf.Fails) == 0 || sf.Fails[0] != faults.Properties.NoDup {
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

// TestHelperKeyedScheduled is run in a child process with the kit's flags:
// it passes its own Schedules, which a flag beats and -short leaves alone.
func TestHelperKeyedScheduled(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestKitFlagsBeatTheSchedulesOption")
	}
	TestDesign(t, keyed, Dir(dir), Families(faults.Families.Clean), Properties(faults.Properties.NoDup), Schedules(5, 3))
}

// TestHelperKeyedDefault is run in a child process: the default budget,
// which -short scales down, and BoundedState, which keyed (no
// faults.Bounded) gives nothing to judge.
func TestHelperKeyedDefault(t *testing.T) {
	dir := os.Getenv(helperEnv)
	if dir == "" {
		t.Skip("run by TestShortScalesTheDefaultBudget and TestNotJudgedIsSaidWithoutVerbose")
	}
	TestDesign(t, keyed, Dir(dir), Families(faults.Families.Clean, faults.Families.Late), Properties(faults.Properties.NoDup, faults.Properties.BoundedState))
}

// logCase is a helper's command-line arguments and a line its passing
// run must log.
type logCase struct {
	args []string
	want string
}

// expectLogs runs helper once per case and checks it passes logging want.
func expectLogs(t *testing.T, helper string, cases []logCase) {
	t.Helper()
	for _, tc := range cases {
		out, err := runNamedHelper(t, helper, t.TempDir(), tc.args...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("with %q: want a pass logging %q (err %v); to reproduce: %s=DIR go test -run '^%s$' -v %s ./props/:\n%s",
				tc.args, tc.want, err, helperEnv, helper, strings.Join(tc.args, " "), out)
		}
	}
}

func TestKitFlagsBeatTheSchedulesOption(t *testing.T) {
	expectLogs(t, "TestHelperKeyedScheduled", []logCase{
		{nil, "5 runs (seeds 3..7)"},
		{[]string{"-onceproof.n=9"}, "9 runs (seeds 3..11)"},
		{[]string{"-onceproof.seed=40"}, "5 runs (seeds 40..44)"},
		{[]string{"-onceproof.n=2", "-onceproof.seed=7", "-test.short"}, "2 runs (seeds 7..8)"},
		{[]string{"-test.short"}, "5 runs (seeds 3..7)"}, // -short scales only the default
	})
}

func TestShortScalesTheDefaultBudget(t *testing.T) {
	expectLogs(t, "TestHelperKeyedDefault", []logCase{
		{nil, "200 schedules per family (DefaultMatrixN) from seed 1"},
		{[]string{"-test.short"}, "20 schedules per family (-short: DefaultMatrixN/10) from seed 1"},
		{[]string{"-test.short"}, "20 runs (seeds 1..20)"},
	})
}

// The designs the kit's own tests run under the default budget still reach
// what every family exists for, and show what they declare, in the -short
// budget: go test -short ./props/ passes for the reason it passes without.
func TestShortBudgetExercisesEveryFamilyOfTheKitsOwnDesigns(t *testing.T) {
	for _, tc := range []struct {
		d        faults.Design
		families []faults.Family
	}{
		{keyed, faults.World.Families},
		{memo, []faults.Family{faults.Families.Clean, faults.Families.Duplicate, faults.Families.Late, faults.Families.Crash}},
	} {
		for _, f := range tc.families {
			c := runCell(tc.d, f, MatrixOptions{N: engine.ShortMatrixN})
			if c.Mismatch() {
				t.Errorf("%s under %s in the -short budget (%d): %s (go test -run '^TestShortBudgetExercisesEveryFamilyOfTheKitsOwnDesigns$' ./props/)",
					tc.d.Name(), f, engine.ShortMatrixN, c.Text())
			}
		}
	}
}

func TestNotJudgedIsSaidWithoutVerbose(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKeyedDefault$")
	cmd.Env = append(os.Environ(), helperEnv+"="+t.TempDir())
	quiet, err := cmd.CombinedOutput()
	want := "onceproof: TestHelperKeyedDefault: BoundedState not judged under clean, late: no node reported its state: the design's Node does not implement faults.Bounded"
	if err != nil || !strings.Contains(string(quiet), want) {
		t.Errorf("without -v: want a pass saying %q (err %v); to reproduce: %s=DIR go test -run '^TestHelperKeyedDefault$' ./props/:\n%s", want, err, helperEnv, quiet)
	}
	// With -v it is a skipped subtest, never a pass, with the same reason.
	out, err := runNamedHelper(t, "TestHelperKeyedDefault", t.TempDir())
	for _, want := range []string{
		"--- SKIP: TestHelperKeyedDefault/family=clean/prop=BoundedState",
		"--- SKIP: TestHelperKeyedDefault/family=late/prop=BoundedState",
		"BoundedState not judged under late: none of 200 runs (seeds 1..200) in ",
		"--- PASS: TestHelperKeyedDefault/family=late/prop=NoDup",
	} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("with -v: output lacks %q (err %v); to reproduce: %s=DIR go test -run '^TestHelperKeyedDefault$' -v ./props/:\n%s", want, err, helperEnv, out)
		}
	}
	if strings.Contains(out, "onceproof: TestHelperKeyedDefault:") {
		t.Errorf("with -v the skipped subtests say it; the summary line is for go test without -v:\n%s", out)
	}
}
