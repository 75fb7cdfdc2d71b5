package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Option configures TestDesign.
type Option func(*config)

type config struct {
	families []Family
	props    []Property
	dir      string
	strict   bool
	tolerant bool
	n        int
	seed     uint64
	run      RunOptions
}

// Families restricts TestDesign to the given fault families (default: all
// of the world's Families; a Join of families is accepted too).
func Families(fs ...Family) Option {
	return func(c *config) { c.families = slices.Clone(fs) }
}

// Properties restricts TestDesign to the given properties (default: all of
// the world's Properties).
func Properties(ps ...Property) Option {
	return func(c *config) { c.props = slices.Clone(ps) }
}

// Dir sets where failures are saved and replayed from (default
// "testdata/onceproof", relative to the test's package directory, which is
// the working directory of go test).
func Dir(dir string) Option { return func(c *config) { c.dir = dir } }

// Schedules sets how many generated schedules each family runs, and the
// first seed: schedule k is the world's Generate(family, seed+k), exactly
// what `onceproof matrix -n n -seed seed` runs for a registered design
// (default DefaultMatrixN from DefaultMatrixSeed). Another seed explores
// other schedules; more schedules find rarer failures.
func Schedules(n int, seed uint64) Option {
	return func(c *config) { c.n, c.seed = n, seed }
}

// StrictExpectations makes a declared failure (Declarer) that the run
// did not show fail the test: use it to guard that a broken design stays
// caught. Off by default, because the search may miss a failure (see
// TestDesign); a failure saved under Dir replays first and always shows.
func StrictExpectations() Option { return func(c *config) { c.strict = true } }

// TolerateUnknown lets a property some run could not judge (the event
// budget ran out) pass, logged instead of failed. The default fails it: an
// unknown run is not a pass. Use it only with RunOptions that lower
// MaxEvents on purpose, and say why where you do.
func TolerateUnknown() Option { return func(c *config) { c.tolerant = true } }

// RunWith sets the runner's options for every run (default: the zero
// RunOptions). RunWith(RunOptions{Free: true}) runs concurrent groups on
// free-running goroutines, for the race detector.
func RunWith(o RunOptions) Option { return func(c *config) { c.run = o } }

// TestDesign judges design d of world w under every fault family, as the
// matrix does (Check), with a subtest per family=<family>/prop=<property>: go test -run
// 'TestMyDesign/family=late/prop=NoLoss' runs one. Failures saved under Dir
// (<design>/<family>-<property>.sched, with a .md timeline beside it) replay
// first. A failure d does not declare (Declarer) fails its subtest
// with the anomalies, the counterexample's timeline and one command that
// reruns it; a declared one passes (StrictExpectations: and must show); a
// run the kit could not judge fails (TolerateUnknown: is logged); a family
// whose runs never reached what it exists for fails. Every failure is real
// and replays; "holds" is no counterexample within the budget (Schedules),
// and the concurrent family sees only the interleavings it enumerates
// (RunWith Free, under -race, runs goroutines freely).
func TestDesign[D Design, S, X any](t *testing.T, w World[D, S, X], d D, opts ...Option) {
	t.Helper()
	c := config{families: w.Families(), props: w.Properties(), dir: filepath.Join("testdata", "onceproof")}
	for _, o := range opts {
		o(&c)
	}
	for _, f := range c.families {
		if err := w.CheckFamily(f); err != nil {
			t.Fatal(err)
		}
	}
	// Every family's cell at once (in parallel), then a subtest each.
	opt := MatrixOptions[D]{N: c.n, Seed: c.seed, Run: c.run, Families: c.families}
	row := Check(w, d, opt)
	for i, f := range c.families {
		t.Run("family="+string(f), func(t *testing.T) {
			t.Helper()
			testFamily(t, w, d, row.Cells[i], c, row.Declaration.Expected(f, w.Properties()))
		})
	}
}

// finding is a property's failure in one family.
type finding[S, X any] struct {
	cx    Counterexample[S, X]
	file  string // the saved .sched
	saved bool   // it came from a saved file, not from the cell's search
}

func testFamily[D Design, S, X any](t *testing.T, w World[D, S, X], d D, cell Cell[S, X], c config, declared []Property) {
	t.Helper()
	f := cell.Family
	dir := filepath.Join(c.dir, FileSafe(d.Name()))
	fileOf := func(p Property) string { return filepath.Join(dir, fmt.Sprintf("%s-%s.sched", f, p)) }
	found := map[Property]*finding[S, X]{}

	// Saved failures replay first.
	for _, p := range c.props {
		file := fileOf(p)
		text, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Errorf("saved counterexample %s: %v", file, err)
			continue
		}
		sf, err := ParseSchedFile(w, string(text))
		if err != nil {
			t.Errorf("saved counterexample %s: %v (fix or delete the file)", file, err)
			continue
		}
		h := w.Run(d, sf.Schedule, c.run)
		r := w.Judge(h)
		if r.Outcome(p) != Fails {
			t.Logf("saved counterexample %s no longer fails %s (now %v); keeping it as a regression test", file, p, r.Outcome(p))
			continue
		}
		found[p] = &finding[S, X]{cx: Counterexample[S, X]{Design: d.Name(), Family: f, Schedule: sf.Schedule, History: h, Report: r}, file: file, saved: true}
	}

	t.Logf("%d runs (seeds %d..%d) reached: %s", cell.Runs, cell.Seed, cell.Seed+uint64(max(cell.Runs, 1))-1, cell.Coverage.Format(w.Reached()))
	if len(cell.Unexercised) > 0 {
		t.Errorf("family %s not exercised: no %s in %d runs, so its properties say nothing of what it exists to test (%s)",
			f, strings.Join(cell.Unexercised, ", "), cell.Runs, rerun(t))
	}
	for _, cx := range cell.Counterexamples {
		for _, p := range cx.Report.Failed() {
			if found[p] != nil || !slices.Contains(c.props, p) {
				continue
			}
			fd := &finding[S, X]{cx: cx, file: fileOf(p)}
			if err := saveFinding(w, fd, rerun(t, "prop="+string(p))); err != nil {
				t.Errorf("saving the counterexample: %v", err)
			}
			found[p] = fd
		}
	}

	for _, p := range c.props {
		t.Run("prop="+string(p), func(t *testing.T) {
			t.Helper()
			fd, isDeclared := found[p], slices.Contains(declared, p)
			unknown := cell.UnknownOf(p)
			switch {
			case fd != nil && !isDeclared:
				t.Errorf("%s fails under %s:\n%s", p, f, describeFinding(t, w, p, fd))
			case fd != nil:
				t.Logf("%s fails under %s, as %s declares:\n%s", p, f, d.Name(), describeFinding(t, w, p, fd))
			case unknown > 0 && c.tolerant:
				t.Logf("%s is unknown under %s: %d of %d runs could not be judged (%s); tolerated (TolerateUnknown)", p, f, unknown, cell.Runs, cell.UnknownWhy)
			case unknown > 0:
				t.Errorf("%s is unknown under %s: %d of %d runs could not be judged (%s), and an unknown run is not a pass (%s)",
					p, f, unknown, cell.Runs, cell.UnknownWhy, rerun(t))
			case isDeclared && c.strict:
				t.Errorf("%s declares that %s fails under %s, but no failure showed in %d runs (%s)", d.Name(), p, f, cell.Runs, rerun(t))
			case isDeclared:
				t.Logf("%s declares that %s fails under %s; no failure showed in %d runs", d.Name(), p, f, cell.Runs)
			case cell.NotJudgedBy[p] == cell.Runs:
				t.Logf("%s not judged under %s: no run gave it anything to judge (the design does not report what it needs)", p, f)
			default:
				t.Logf("%s held in %d runs (seeds %d..%d)", p, cell.Runs, cell.Seed, cell.Seed+uint64(cell.Runs)-1)
			}
		})
	}
}

func describeFinding[D Design, S, X any](t *testing.T, w World[D, S, X], p Property, fd *finding[S, X]) string {
	var b strings.Builder
	v, _ := fd.cx.Report.Verdict(p)
	for _, a := range v.Anomalies {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	s := fd.cx.Schedule
	src := "found by the search, saved as " + fd.file + " (its timeline and diagram: " + mdOf(fd.file) + ")"
	if fd.saved {
		src = "replayed from " + fd.file
	}
	fmt.Fprintf(&b, "minimal schedule (%s), %s\n", Size(w, s), src)
	b.WriteString(Timeline(w, fd.cx.History, fd.cx.Report))
	fmt.Fprintf(&b, "To reproduce (the saved file replays first): %s\n", rerun(t))
	return b.String()
}

// mdOf is the .md beside a saved .sched.
func mdOf(sched string) string { return strings.TrimSuffix(sched, ".sched") + ".md" }

// saveFinding writes the finding's .sched and, beside it, its .md with the
// command that replays it.
func saveFinding[D Design, S, X any](w World[D, S, X], fd *finding[S, X], replay string) error {
	if err := os.MkdirAll(filepath.Dir(fd.file), 0o755); err != nil {
		return err
	}
	sf := SchedFile[S]{Design: fd.cx.Design, Fails: fd.cx.Report.Failed(), Schedule: fd.cx.Schedule}
	if err := os.WriteFile(fd.file, []byte(FormatSchedFile(w, sf)), 0o644); err != nil {
		return err
	}
	return os.WriteFile(mdOf(fd.file), []byte(Markdown(w, fd.cx, replay, "TestDesign")), 0o644)
}

// rerun is the one command that reruns test t (with its subtests sub, if
// t is not yet there) from its package directory.
func rerun(t *testing.T, sub ...string) string {
	parts := append(strings.Split(t.Name(), "/"), sub...)
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return fmt.Sprintf("cd %s && go test -run '%s' .", dir, strings.Join(parts, "/"))
}

// FileSafe keeps a design name usable as one path element.
func FileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == 0 {
			return '_'
		}
		return r
	}, name)
}
