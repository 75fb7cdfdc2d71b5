package engine_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// The kit (engine.TestDesign) on toy designs: as props.TestDesign and
// lootprops.TestDesign drive it, with the toy world in place of theirs.

// undeclared is a design that declares nothing, whatever it wraps.
type undeclared struct{ d toyDesign }

func (u undeclared) Name() string                         { return "undeclared-" + u.d.Name() }
func (u undeclared) NewNode(id int, e toyEnv) engine.Node { return u.d.NewNode(id, e) }

// overclaims is keyed declaring a failure it does not have.
type overclaims struct{ keyed }

func (overclaims) Name() string { return "overclaims" }
func (overclaims) Declare() engine.Declaration {
	return engine.Declaration{Fails: []engine.Expect{{Families: []engine.Family{famDup}, Props: []engine.Property{noDup}, Why: "it does not: the key dedups every copy (a declaration that must not show)"}}}
}

// A design that holds, and designs whose failures are declared, pass;
// declared failures are saved with their timelines, and a second run
// replays them first.
func TestToyKitPassesWhatIsDeclared(t *testing.T) {
	dir := t.TempDir()
	t.Run("keyed", func(t *testing.T) {
		engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(dir), engine.Schedules(toyN, 1), engine.StrictExpectations())
	})
	t.Run("journal-two-families", func(t *testing.T) {
		engine.TestDesign(t, toyWorld, toyDesign(journal{}), engine.Dir(dir), engine.Schedules(toyN, 1),
			engine.Families(famGiveUp, famSmall), engine.Properties(noLoss, responsive))
	})
	for range 2 { // the second pass replays what the first saved
		t.Run("unkeyed", func(t *testing.T) {
			engine.TestDesign(t, toyWorld, toyDesign(unkeyed{}), engine.Dir(dir), engine.Schedules(toyN, 1), engine.StrictExpectations())
		})
	}
	for _, f := range []string{"dup-NoDup.sched", "dup-NoDup.md", "small-NoDup.sched"} {
		if _, err := os.Stat(filepath.Join(dir, "unkeyed", f)); err != nil {
			t.Errorf("TestDesign did not save unkeyed's declared failure: %v (go test -run '^TestToyKitPassesWhatIsDeclared$' ./engine)", err)
		}
	}
	t.Run("tolerated-unknown", func(t *testing.T) {
		// A budget of 4 events cuts every run short on purpose, after both
		// arrivals of small's copies (a keyed attempt is 3 events: arrive,
		// apply, ack) and so after what small exists to make happen.
		engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(dir), engine.Families(famSmall),
			engine.RunWith(engine.RunOptions{MaxEvents: 4}), engine.TolerateUnknown())
	})
}

// kitCases are the kit's failures, each run in a child test binary (a
// failing TestDesign fails its *testing.T): what the child runs, and what
// its output must say.
var kitCases = map[string]struct {
	run  func(t *testing.T, dir string)
	want []string
	once []string // what the output must say exactly once
}{
	"undeclared": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(undeclared{unkeyed{}}), engine.Dir(dir), engine.Families(famCrash), engine.Schedules(toyN, 1))
		},
		want: []string{"NoDup fails under crash:", "minimal schedule (1 increments, 1 deliveries, 1 faults)", "i0 (+", "was added 2 times",
			"To reproduce (the saved file replays first): cd ", "-onceproof.seed=1 -onceproof.n=40 ."},
	},
	"two-properties": {
		// panicky's crash counterexample fails NoLoss and Responsive, both
		// undeclared here: two errors, one timeline.
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(undeclared{panicky{}}), engine.Dir(dir), engine.Families(famCrash), engine.Schedules(toyN, 1))
		},
		want: []string{"NoLoss fails under crash:", "Responsive fails under crash:", "it fails NoLoss, Responsive (the other subtests print this timeline no more):",
			"it fails NoLoss, Responsive: its timeline is printed once, under prop=NoLoss, and saved in "},
		once: []string{"events:\n"},
	},
	"strict": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(overclaims{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(toyN, 1), engine.StrictExpectations())
		},
		want: []string{"overclaims declares that NoDup fails under dup, but no failure showed in 40 runs (seeds 1..40)", "a budget of 40 schedules (Schedules)"},
	},
	"unknown": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1), engine.RunWith(engine.RunOptions{MaxEvents: 3}))
		},
		want: []string{"NoDup is unknown under dup: 5 of 5 runs could not be judged (seed 1: the budget ran out", "an unknown run is not a pass"},
	},
	"unexercised": {
		run: func(t *testing.T, dir string) {
			// The first error schedule whose faults all miss keyed's one
			// effect (an attempt past the run, or an effect past 0).
			seed := uint64(1)
			for toyCoverage(toyRun(keyed{}, toyGenerate(famError, seed), engine.RunOptions{}))["fault"] > 0 {
				seed++
			}
			engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(dir), engine.Families(famError), engine.Schedules(1, seed))
		},
		want: []string{"family error not exercised: no fault in 1 runs"},
	},
	"bad-family": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(dir), engine.Families("nope"))
		},
		want: []string{`unknown toy family "nope"`},
	},
	"bad-saved": {
		run: func(t *testing.T, dir string) {
			if err := os.MkdirAll(filepath.Join(dir, "keyed"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "keyed", "dup-NoDup.sched"), []byte("nodes 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			engine.TestDesign(t, toyWorld, toyDesign(keyed{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1))
		},
		want: []string{"dup-NoDup.sched: schedule: missing the \"family\" header line (fix or delete the file)"},
	},
}

// TestToyKitChild is the child of TestToyKitReportsEveryFailure: it runs
// the case TOY_KIT_CASE names and fails as that case does.
func TestToyKitChild(t *testing.T) {
	name := os.Getenv("TOY_KIT_CASE")
	if name == "" {
		t.Skip("runs only as the child of TestToyKitReportsEveryFailure")
	}
	kitCases[name].run(t, os.Getenv("TOY_KIT_DIR"))
}

func TestToyKitReportsEveryFailure(t *testing.T) {
	for name, c := range kitCases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out, code := kitChild(t, name, dir)
			if code == 0 {
				t.Errorf("the %s child passed; want it to fail (TOY_KIT_CASE=%s go test -run '^TestToyKitChild$' ./engine):\n%s", name, name, out)
			}
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("the %s child's output lacks %q (TOY_KIT_CASE=%s go test -run '^TestToyKitChild$' ./engine):\n%s", name, w, name, out)
				}
			}
			for _, w := range c.once {
				if n := strings.Count(out, w); n != 1 {
					t.Errorf("the %s child's output says %q %d times, want once (TOY_KIT_CASE=%s go test -run '^TestToyKitChild$' ./engine):\n%s", name, w, n, name, out)
				}
			}
			if name != "undeclared" {
				return
			}
			// The failure was saved; the next run replays it first.
			if _, err := os.Stat(filepath.Join(dir, "undeclared-unkeyed", "crash-NoDup.md")); err != nil {
				t.Errorf("the failure's timeline was not saved: %v", err)
			}
			if out, _ := kitChild(t, name, dir); !strings.Contains(out, "replayed from "+filepath.Join(dir, "undeclared-unkeyed", "crash-NoDup.sched")) {
				t.Errorf("the second run did not replay the saved failure:\n%s", out)
			}
		})
	}
}

// kitChild runs the test binary on TestToyKitChild for case name.
func kitChild(t *testing.T, name, dir string) (string, int) {
	t.Helper()
	return testChild(t, []string{"-test.run=^TestToyKitChild$", "-test.v"}, "TOY_KIT_CASE="+name, "TOY_KIT_DIR="+dir)
}

// testChild runs the test binary with args and env added to the
// environment, and returns its output and exit code.
func testChild(t *testing.T, args []string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}
