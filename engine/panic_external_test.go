package engine_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
	"github.com/onceproof/onceproof/props"
)

// broken is the settlement world with a harness bug in two columns:
// under duplicate its properties panic (on the cell's goroutine), and under
// concurrent every node reports its state through a StateSize that panics
// (on an interleaved group's goroutine, inside engine.Run, outside Deliver).
// Every other column is the real world's.
var broken = brokenWorld(props.World)

func brokenWorld(w engine.World[faults.Design, faults.Schedule, faults.Detail]) engine.World[faults.Design, faults.Schedule, faults.Detail] {
	judge, run := w.Judge, w.Run
	w.Judge = func(h engine.History[faults.Schedule, faults.Detail]) engine.Report {
		if h.Schedule.Family == faults.Families.Duplicate {
			panic("injected: a property checker indexed past the history")
		}
		return judge(h)
	}
	w.Run = func(d faults.Design, s faults.Schedule, o engine.RunOptions) engine.History[faults.Schedule, faults.Detail] {
		if s.Family == faults.Families.Concurrent {
			d = sizePanics{d}
		}
		return run(d, s, o)
	}
	return w
}

// sizePanics is d with nodes whose StateSize panics: the runner samples it
// after every attempt, outside Deliver, so no property judges the panic.
type sizePanics struct{ faults.Design }

func (d sizePanics) NewCluster() faults.Cluster { return sizeCluster{d.Design.NewCluster()} }

type sizeCluster struct{ faults.Cluster }

func (c sizeCluster) NewNode(id int, env faults.Env) faults.Node {
	return sizeNode{c.Cluster.NewNode(id, env)}
}

type sizeNode struct{ faults.Node }

func (n sizeNode) Recover(now time.Time) error {
	if r, ok := n.Node.(faults.Recoverer); ok {
		return r.Recover(now)
	}
	return nil
}
func (sizeNode) StateSize(time.Time) int      { panic("injected: the state report broke") }
func (sizeNode) StateSpan() time.Duration     { return 0 }
func (sizeNode) StateBound(l faults.Load) int { return 0 }

// brokenFamilies are the cells the tests run: two broken, two whole.
var brokenFamilies = []faults.Family{faults.Families.Clean, faults.Families.Duplicate, faults.Families.Concurrent, faults.Families.Late}

// TestEnginePanicIsTheCellsHarnessError: a panic outside the design's
// Deliver and Recover, on the cell's goroutine or inside a run, is its
// cell's harness error, naming the family, the seed, the schedule and how
// to replay it; the other cells run and hold. Before, the panic killed the
// process and every other cell with it.
func TestEnginePanicIsTheCellsHarnessError(t *testing.T) {
	const rerun = "(reproduce: go test -run '^TestEnginePanicIsTheCellsHarnessError$' ./engine)"
	m := engine.RunMatrix(broken, engine.MatrixOptions[faults.Design]{Designs: []faults.Design{faultstest.Keyed{}}, Families: brokenFamilies, N: 20})
	row := m.Rows[0]
	for i, f := range brokenFamilies {
		c := row.Cells[i]
		broke := f == faults.Families.Duplicate || f == faults.Families.Concurrent
		if !broke {
			if !c.Holds() {
				t.Errorf("%s: %s; want it to hold, whatever the other cells did %s", f, c.Text(), rerun)
			}
			continue
		}
		if c.Harness == nil || c.Holds() || !c.Mismatch() {
			t.Errorf("%s: %s (harness %v); want a harness error that fails the cell %s", f, c.Text(), c.Harness, rerun)
			continue
		}
		want := []string{"harness error", "injected: ", "run: design keyed, family " + string(f) + ", seed 1",
			"To replay: save the schedule below as FILE.sched", "# design: keyed", "family " + string(f), "stack:"}
		text := c.Harness.Error()
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the harness error lacks %q %s:\n%s", f, w, rerun, text)
			}
		}
		if _, err := broken.Parse(c.Harness.Schedule); err != nil {
			t.Errorf("%s: the harness error's schedule does not parse: %v %s", f, err, rerun)
		}
	}
	if n := len(m.Mismatches()); n != 2 {
		t.Errorf("%d mismatches, want the 2 broken cells %s: %v", n, rerun, m.Mismatches())
	}
}

// helperPanicEnv runs TestHelperBrokenWorld in a child process.
const helperPanicEnv = "ONCEPROOF_ENGINE_PANIC_HELPER_DIR"

// TestHelperBrokenWorld is run in a child process by
// TestTestDesignReportsAHarnessErrorAndRunsOn, where it must fail.
func TestHelperBrokenWorld(t *testing.T) {
	dir := os.Getenv(helperPanicEnv)
	if dir == "" {
		t.Skip("run by TestTestDesignReportsAHarnessErrorAndRunsOn")
	}
	engine.TestDesign(t, broken, faults.Design(faultstest.Keyed{}), engine.Dir(dir), engine.Families(brokenFamilies...), engine.Schedules(20, 1))
}

func TestTestDesignReportsAHarnessErrorAndRunsOn(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperBrokenWorld$", "-test.v")
	cmd.Env = append(os.Environ(), helperPanicEnv+"="+t.TempDir())
	out, err := cmd.CombinedOutput()
	const rerun = "(reproduce: go test -run '^TestTestDesignReportsAHarnessErrorAndRunsOn$' ./engine)"
	if err == nil {
		t.Fatalf("TestDesign passed a world whose cells panic %s:\n%s", rerun, out)
	}
	for _, want := range []string{
		"--- FAIL: TestHelperBrokenWorld/family=duplicate ",
		"--- FAIL: TestHelperBrokenWorld/family=concurrent ",
		"--- PASS: TestHelperBrokenWorld/family=clean ",
		"--- PASS: TestHelperBrokenWorld/family=late ", // after the broken cells: the binary ran on
		"family duplicate stopped: harness error",
		"run: design keyed, family concurrent, seed 1",
		"To reproduce: cd ",
		"go test -run '^TestHelperBrokenWorld$/^family=duplicate$' -onceproof.seed=1 -onceproof.n=20 .",
		"NoDup is not judged under duplicate: the cell stopped at a harness error",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q %s:\n%s", want, rerun, out)
		}
	}
	// A crash of the binary prints "panic: " at the start of a line.
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "panic: ") {
			t.Errorf("the test binary crashed %s:\n%s", rerun, out)
			break
		}
	}
}
