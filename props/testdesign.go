package props

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

	"github.com/onceproof/onceproof/faults"
	"pgregory.net/rapid"
)

// Option configures TestDesign.
type Option func(*config)

type config struct {
	families []faults.Family
	props    []faults.Property
	dir      string
	strict   bool
	run      faults.RunOptions
	shrink   int
}

// Families restricts TestDesign to the given fault families (default: all of
// faults.Families).
func Families(fs ...faults.Family) Option {
	return func(c *config) { c.families = slices.Clone(fs) }
}

// Properties restricts TestDesign to the given properties (default: all of
// faults.Properties).
func Properties(ps ...faults.Property) Option {
	return func(c *config) { c.props = slices.Clone(ps) }
}

// Dir sets where failures are saved and replayed from (default
// "testdata/onceproof", relative to the test's package directory, which is
// the working directory of go test).
func Dir(dir string) Option { return func(c *config) { c.dir = dir } }

// StrictExpectations makes a declared failure (faults.Expecter) that the run
// did not show fail the test: use it to guard that a broken design stays
// caught. Off by default, because the search may miss a failure (see
// TestDesign); a failure saved under Dir replays first and always shows.
func StrictExpectations() Option { return func(c *config) { c.strict = true } }

// RunOptions sets the runner's options for every run (default: the zero
// faults.RunOptions, i.e. faults.DefaultMaxEvents).
func RunOptions(o faults.RunOptions) Option { return func(c *config) { c.run = o } }

// ShrinkBudget bounds the schedule-level shrink that follows rapid's (default
// DefaultShrinkBudget candidate runs).
func ShrinkBudget(n int) Option { return func(c *config) { c.shrink = n } }

// TestDesign runs design d under every fault family and judges every
// property, as subtests named family=<family>/prop=<property>; for example
//
//	go test -run 'TestMyDesign/family=late/prop=NoLoss'
//
// runs one cell. It is to a settlement design what testing/fstest.TestFS is
// to a file system: call it from a test with your own implementation.
//
// For each family it does three things, in order:
//
//  1. It replays the saved failures of that family first: every file
//     <Dir>/<design>/<family>-<property>.sched (faults' text form).
//  2. It searches with pgregory.net/rapid: rapid.Check draws schedules
//     from faults.Gen(family) (rapid's -rapid.checks per search, default
//     100), runs each with faults.Run and judges it with Judge. On the first
//     failing property rapid shrinks the schedule, Shrink shrinks it further
//     at the schedule level (staying inside the world rules of
//     faults.CheckWorld, and adding no failure the generated schedule did
//     not show), and the result is saved under Dir. The search repeats
//     without the properties already found, so one failure does not hide
//     another.
//  3. It reports each property as a subtest. A property that fails and that
//     d does not declare failing (faults.Expecter) fails its subtest, which
//     prints the anomalies, the minimal schedule as text, and the one
//     command that replays it (the saved file replays first). A declared
//     failure passes; with StrictExpectations a declared failure that did
//     not show fails. A property whose every run ran out of budget
//     (History.Exhausted) is unknown, and fails: a budget that ran out is a
//     verdict, not a pass.
//
// Designs registered in package impls also replay with
// `go run github.com/onceproof/onceproof/cmd/onceproof replay FILE`; a
// design of yours replays with the go test command TestDesign prints.
//
// Optional capabilities are found by type assertion, as the runner does:
// faults.Recoverer (recovery after a crash and at drain), faults.Bounded
// (state size for BoundedState; without it BoundedState holds vacuously).
//
// What it can miss. Every failure it reports is real: it judges a history
// the design produced, and the schedule replays it (no false positives). It
// can miss failures (false negatives): it runs a bounded number of
// generated schedules of bounded size, so a bug that needs a longer or
// rarer schedule may not show; the concurrent family interleaves its
// goroutines deterministically, switching only at scheduling points (before
// each attempt and each Env call) as the schedule's Switches choose, so a
// race inside the design's own memory between two Env calls does not show
// there (pass RunOptions(faults.RunOptions{Free: true}) and run under -race
// for free-running goroutines, whose failures may not replay); and a run
// that exhausts its budget proves nothing for that run. "holds" means "no counterexample
// found within the budget", not a proof.
//
// rapid also keeps its own fail files under testdata/rapid/ (disable with
// -rapid.nofailfile); the .sched files are the durable form, since a rapid
// seed or fail file replays only on the same generator version.
func TestDesign(t *testing.T, d faults.Design, opts ...Option) {
	t.Helper()
	c := config{families: faults.Families, props: faults.Properties, dir: filepath.Join("testdata", "onceproof")}
	for _, o := range opts {
		o(&c)
	}
	exp := expectations(d)
	for _, f := range c.families {
		t.Run("family="+string(f), func(t *testing.T) {
			t.Helper()
			testFamily(t, d, f, c, exp[f])
		})
	}
}

// finding is a property's failure in one family.
type finding struct {
	sched  faults.Schedule
	report Report
	file   string // the saved file
	saved  bool   // it came from a saved file, not from the search
	rapid  string // rapid's own reproduction line, if it came from the search
}

func testFamily(t *testing.T, d faults.Design, f faults.Family, c config, declared []faults.Property) {
	t.Helper()
	dir := filepath.Join(c.dir, fileSafe(d.Name()))
	found := map[faults.Property]*finding{}
	run := func(s faults.Schedule) (faults.History, Report) {
		h := faults.Run(d, s, c.run)
		return h, Judge(h)
	}

	// 1. Saved failures replay first.
	for _, p := range c.props {
		file := filepath.Join(dir, fmt.Sprintf("%s-%s.sched", f, p))
		text, err := os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Errorf("saved counterexample %s: %v", file, err)
			continue
		}
		sf, err := ParseSchedFile(string(text))
		if err != nil {
			t.Errorf("saved counterexample %s: %v (fix or delete the file)", file, err)
			continue
		}
		if _, r := run(sf.Schedule); r.Outcome(p) == Fails {
			found[p] = &finding{sched: sf.Schedule, report: r, file: file, saved: true}
		} else {
			t.Logf("saved counterexample %s no longer fails %s (now %v); keeping it as a regression test", file, p, r.Outcome(p))
		}
	}

	// 2. Search with rapid, one round per property found.
	runs, unknown := 0, map[faults.Property]int{}
	for len(found) < len(c.props) {
		var last *finding
		var lastProp faults.Property
		rec := &recorder{t: t, name: t.Name()}
		rapid.Check(rec, func(rt *rapid.T) {
			s := faults.Gen(f).Draw(rt, "schedule")
			_, r := run(s)
			runs++
			for _, p := range c.props {
				if found[p] != nil {
					continue
				}
				switch r.Outcome(p) {
				case Unknown:
					unknown[p]++
				case Fails:
					last, lastProp = &finding{sched: s, report: r}, p
					// The message names only the property: rapid shrinks
					// while the error stays the same, so the shrunk schedule
					// fails this same property.
					rt.Fatalf("%s fails", p)
				}
			}
		})
		if !rec.failed || last == nil {
			break
		}
		p := lastProp
		// rapid ran the property last on its minimal case; shrink that
		// further at the schedule level.
		// Shrink further, keeping p failing and failing nothing the
		// generated schedule did not: a candidate outside the family's
		// world (a gap in a player's sequence numbers no sender makes)
		// must not add failures of its own.
		allowed := last.report.Failed()
		s := Shrink(last.sched, func(s faults.Schedule) bool {
			_, r := run(s)
			if r.Outcome(p) != Fails {
				return false
			}
			for _, q := range r.Failed() {
				if !slices.Contains(allowed, q) {
					return false
				}
			}
			return true
		}, c.shrink)
		_, r := run(s)
		if r.Outcome(p) != Fails {
			// Only a run that does not replay the same way (the
			// concurrent family's real goroutines, or a design that reads
			// the clock or randomness) gets here: keep the failing run.
			s, r = last.sched, last.report
		}
		// The schedule is a counterexample for every property it fails
		// that has none yet: the next round need not search for those.
		for _, q := range r.Failed() {
			if found[q] != nil || (q != p && !slices.Contains(c.props, q)) {
				continue
			}
			fd := &finding{sched: s, report: r, rapid: rec.repro}
			fd.file = filepath.Join(dir, fmt.Sprintf("%s-%s.sched", f, q))
			if err := saveSched(fd.file, SchedFile{Design: d.Name(), Fails: r.Failed(), Schedule: s}); err != nil {
				t.Errorf("saving the counterexample: %v", err)
			}
			found[q] = fd
		}
	}

	// 3. One subtest per property.
	for _, p := range c.props {
		t.Run("prop="+string(p), func(t *testing.T) {
			t.Helper()
			fd, isDeclared := found[p], slices.Contains(declared, p)
			switch {
			case fd != nil && !isDeclared:
				t.Errorf("%s fails under %s:\n%s", p, f, describeFinding(t, d, p, fd))
			case fd != nil:
				t.Logf("%s fails under %s, as %s declares:\n%s", p, f, d.Name(), describeFinding(t, d, p, fd))
			case isDeclared && c.strict:
				t.Errorf("%s declares that %s fails under %s, but no failure showed in %d runs (%s)",
					d.Name(), p, f, runs, rerun(t))
			case isDeclared:
				t.Logf("%s declares that %s fails under %s; no failure showed in %d runs", d.Name(), p, f, runs)
			case runs > 0 && unknown[p] == runs:
				t.Errorf("%s is unknown under %s: all %d runs ran out of budget (History.Exhausted), so nothing was shown (%s)", p, f, runs, rerun(t))
			case unknown[p] > 0:
				t.Logf("%s held in %d of %d runs; %d ran out of budget (unknown)", p, runs-unknown[p], runs, unknown[p])
			default:
				t.Logf("%s held in %d runs", p, runs)
			}
		})
	}
}

func describeFinding(t *testing.T, d faults.Design, p faults.Property, fd *finding) string {
	var b strings.Builder
	v, _ := fd.report.Verdict(p)
	for _, a := range v.Anomalies {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	fmt.Fprintf(&b, "minimal schedule (%d settlements, %d deliveries, %d faults):\n%s",
		len(fd.sched.Settlements), len(fd.sched.Deliveries), len(fd.sched.Faults), faults.Format(fd.sched))
	src := "found by the search and saved as " + fd.file
	if fd.saved {
		src = "replayed from " + fd.file
	}
	fmt.Fprintf(&b, "%s\nTo reproduce (the saved file replays first): %s\n", src, rerun(t))
	if fd.rapid != "" {
		fmt.Fprintf(&b, "rapid: %s\n", fd.rapid)
	}
	return b.String()
}

// rerun is the one command that reruns test t from its package directory.
func rerun(t *testing.T) string {
	parts := strings.Split(t.Name(), "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return fmt.Sprintf("cd %s && go test -run '%s' .", dir, strings.Join(parts, "/"))
}

func saveSched(file string, f SchedFile) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(FormatSchedFile(f)), 0o644)
}

// expectations is d's declared failures (none if d is not a faults.Expecter).
func expectations(d faults.Design) faults.Expectation {
	if e, ok := d.(faults.Expecter); ok {
		return e.Expected()
	}
	return faults.Expectation{}
}

// fileSafe keeps a design name usable as one path element.
func fileSafe(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r == 0 {
			return '_'
		}
		return r
	}, name)
}

// recorder is the rapid.TB TestDesign hands rapid.Check: it logs through the
// test but keeps rapid's failure to itself, so one failing property becomes
// one failing subtest instead of failing the whole family at once.
type recorder struct {
	t      *testing.T
	name   string
	failed bool
	repro  string
}

var _ rapid.TB = (*recorder)(nil)

func (r *recorder) Helper()      {}
func (r *recorder) Name() string { return r.name }

// Logf keeps rapid's own status lines ("[rapid] OK, passed 100 tests") and
// drops the rest: the draws of the failing case and the property's message,
// which the property subtest reports better (as schedule text).
func (r *recorder) Logf(f string, a ...any) {
	if msg := fmt.Sprintf(f, a...); strings.HasPrefix(msg, "[rapid]") && !strings.HasPrefix(msg, "[rapid] draw") {
		r.t.Log(msg)
	}
}
func (r *recorder) Log(a ...any) { r.Logf("%s", fmt.Sprint(a...)) }
func (r *recorder) Skipf(f string, a ...any) {
	r.t.Skipf(f, a...)
}
func (r *recorder) Skip(a ...any) { r.t.Skip(a...) }
func (r *recorder) SkipNow()      { r.t.SkipNow() }
func (r *recorder) Errorf(f string, a ...any) {
	r.failed = true
	msg := fmt.Sprintf(f, a...)
	// Keep rapid's "To reproduce, specify -run=... -rapid.seed=..." line.
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(line, "To reproduce") {
			r.repro = line
		}
	}
}
func (r *recorder) Error(a ...any)            { r.Errorf("%s", fmt.Sprint(a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...) }
func (r *recorder) Fatal(a ...any)            { r.Error(a...) }
func (r *recorder) FailNow()                  { r.failed = true }
func (r *recorder) Fail()                     { r.failed = true }
func (r *recorder) Failed() bool              { return r.failed }
