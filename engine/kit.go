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
	"time"
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
	from     string // where n came from (budget), for the messages
	run      RunOptions
	noBubble bool // NoBubble (bubble.go)
}

// Families restricts TestDesign to the given fault families (default: the
// world's Columns, its Families and then its documented Joins; any Join of
// families is accepted too).
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

// TestDesign judges design d of world w under every fault family and every
// join the world documents (World.Columns), as the matrix does (Check), with a subtest per family=<family>/prop=<property>: go test -run
// 'TestMyDesign/family=late/prop=NoLoss' runs one. Every run is made in a
// testing/synctest bubble of its own whose clock is the world's, so a
// design's (and its libraries') time.Now, timers and tickers read virtual
// time, and goroutines it leaves behind fail Responsive (bubble.go;
// NoBubble opts out). A sampled family (World.Sampled: settlement's
// in-node, concurrent calls on one node) runs only when named in
// Families, since a design whose node is not safe for concurrent calls
// is a fatal error of the Go runtime there; its counterexamples replay
// up to SampledReplays times, and the report says how many reproduced. Failures saved under Dir
// (<design>/<family>-<property>.sched, with a .md timeline beside it) replay
// first. A failure d does not declare (Declarer) fails its subtest
// with the anomalies, the counterexample's timeline and one command that
// reruns it; a declared one passes (StrictExpectations: and must show); a
// run the kit could not judge fails (TolerateUnknown: is logged); a family
// whose runs never reached what it exists for fails. Every failure is real
// and replays; "holds" is no counterexample within the budget (Schedules),
// and the concurrent family sees only the interleavings it enumerates
// (RunWith Free, under -race, runs goroutines freely).
//
// -onceproof.shard=i/n runs only the families that are shard i's (the
// others are skipped subtests): n processes share one TestDesign.
//
// The budget: -onceproof.n and -onceproof.seed beat Schedules, which beats
// the default (DefaultMatrixN, ShortMatrixN under -short); the log says
// which. Every failure's reproduce command carries both flags. A property
// no run gave anything to judge (BoundedState of a design without
// faults.Bounded) is a skipped subtest, never a pass, and is said once
// without -v as a line on standard output.
func TestDesign[D Design, S, X any](t *testing.T, w World[D, S, X], d D, opts ...Option) {
	t.Helper()
	w = w.Complete()
	c := config{families: w.Columns(), props: w.Properties, dir: filepath.Join("testdata", "onceproof")}
	for _, o := range opts {
		o(&c)
	}
	w = inBubbles(t, w, !c.noBubble)
	for _, f := range c.families {
		if err := w.CheckFamily(f); err != nil {
			t.Fatal(err)
		}
	}
	c.n, c.seed, c.from = budget(c.n, c.seed)
	t.Logf("%s: %d schedules per family (%s) from seed %d", d.Name(), c.n, c.from, c.seed)
	// Each family's cell runs inside its subtest: -run on one family (as
	// the reproduce command does) runs that cell only, and the subtest's
	// time is its cell's. The cells then run one after another rather than
	// in parallel; t.Parallel would run them after the caller's test body
	// returned, past any defer that closes what the design uses.
	shard, err := kitShard()
	if err != nil {
		t.Fatal(err)
	}
	var notJudged []notJudgedCell
	for j, f := range c.families {
		t.Run("family="+string(f), func(t *testing.T) {
			t.Helper()
			if !shard.Has(0, j, 1) {
				t.Skipf("-%s %s: family %d of %d is shard %d's", flagShard, shard, j+1, len(c.families), j%shard.N)
			}
			start := time.Now()
			cell := RunCell(w, d, f, MatrixOptions[D]{N: c.n, Seed: c.seed, Run: c.run, Families: []Family{f}})
			notJudged = append(notJudged, testFamily(t, w, d, cell, c, time.Since(start))...)
		})
	}
	sayNotJudged(t, notJudged)
}

// notJudgedCell is a property no run of a family gave anything to judge,
// and why.
type notJudgedCell struct {
	prop   Property
	family Family
	why    string
}

// sayNotJudged prints, once per TestDesign, the properties some family
// could not judge. Each is a skipped subtest already, but go test shows a
// passing test's log and its subtests' skips only under -v; without -v a
// line on the test binary's standard output is what go test shows (in
// its local directory mode; in package list mode go test shows nothing of
// a passing package, whatever it prints).
func sayNotJudged(t *testing.T, cells []notJudgedCell) {
	if len(cells) == 0 || testing.Verbose() {
		return
	}
	var order []Property
	families := map[Property][]string{}
	why := map[Property]string{}
	for _, nj := range cells {
		if families[nj.prop] == nil {
			order = append(order, nj.prop)
			why[nj.prop] = nj.why
		}
		families[nj.prop] = append(families[nj.prop], string(nj.family))
	}
	for _, p := range order {
		fmt.Fprintf(os.Stdout, "onceproof: %s: %s not judged under %s: %s (go test -v lists them as skipped subtests)\n",
			t.Name(), p, strings.Join(families[p], ", "), why[p])
	}
}

// finding is a property's failure in one family.
type finding[S, X any] struct {
	cx    Counterexample[S, X]
	file  string // the saved .sched
	saved bool   // it came from a saved file, not from the cell's search
}

// testFamily reports cell (which took took to run) in a subtest per
// property, and returns the properties it could not judge.
func testFamily[D Design, S, X any](t *testing.T, w World[D, S, X], d D, cell Cell[S, X], c config, took time.Duration) []notJudgedCell {
	t.Helper()
	declared := cell.Expected
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
		var h History[S, X]
		var r Report
		tries := 1
		run := func() { h = w.Run(d, sf.Schedule, c.run); r = w.Judge(h) }
		if w.isSampled(f) {
			// A sampled family's run is the runtime's interleaving:
			// replay until one fails, up to SampledReplays times.
			run = func() { h, r, _, tries, _ = replaySampled(w, d, sf.Schedule, c.run, p, false) }
		}
		if e := catch(run); e != nil {
			t.Errorf("saved counterexample %s: %v\nstack:\n%s\nTo reproduce (the saved file replays first): %s", file, e, e.Stack, rerun(t, c))
			continue
		}
		if r.Outcome(p) != Fails {
			t.Logf("saved counterexample %s no longer fails %s in %d replays (now %v); keeping it as a regression test", file, p, tries, r.Outcome(p))
			continue
		}
		found[p] = &finding[S, X]{cx: Counterexample[S, X]{Design: d.Name(), Family: f, Schedule: sf.Schedule, History: h, Report: r}, file: file, saved: true}
	}

	ran := fmt.Sprintf("%d runs (seeds %d..%d) in %v", cell.Runs, cell.Seed, cell.Seed+uint64(max(cell.Runs, 1))-1, took.Round(time.Millisecond))
	if cell.Scope != "" {
		ran = fmt.Sprintf("all %d runs of %s in %v", cell.Runs, cell.Scope, took.Round(time.Millisecond))
	}
	if w.isSampled(f) {
		ran += ", a sampled search (each run one interleaving the Go runtime chose; the seeds do not replay them)"
	}
	t.Logf("%s reached: %s", ran, cell.Coverage.Format(w.Reached))
	if cell.Harness != nil {
		t.Errorf("family %s stopped: %v\nTo reproduce: %s", f, *cell.Harness, rerun(t, c))
	}
	if len(cell.Unexercised) > 0 {
		t.Errorf("family %s not exercised: no %s in %d runs, so its properties say nothing of what it exists to test (%s)",
			f, strings.Join(cell.Unexercised, ", "), cell.Runs, rerun(t, c))
	}
	for _, cx := range cell.Counterexamples {
		for _, p := range cx.Report.Failed() {
			if found[p] != nil || !slices.Contains(c.props, p) {
				continue
			}
			fd := &finding[S, X]{cx: cx, file: fileOf(p)}
			if err := saveFinding(w, fd, rerun(t, c, "prop="+string(p))); err != nil {
				t.Errorf("saving the counterexample: %v", err)
			}
			found[p] = fd
		}
	}

	// A counterexample that fails several properties prints its timeline
	// once: in the first subtest that reports it as an error (a passing
	// subtest's log is shown only with -v), else in the first; the others
	// name that subtest and the saved .md.
	printer := map[string]Property{} // by the schedule's text
	for _, p := range c.props {
		if fd := found[p]; fd != nil {
			k := w.Format(fd.cx.Schedule)
			if q, ok := printer[k]; !ok || slices.Contains(declared, q) && !slices.Contains(declared, p) {
				printer[k] = p
			}
		}
	}
	describe := func(t *testing.T, p Property, fd *finding[S, X]) string {
		return describeFinding(t, w, d, c, p, fd, printer[w.Format(fd.cx.Schedule)])
	}

	var notJudged []notJudgedCell
	for _, p := range c.props {
		t.Run("prop="+string(p), func(t *testing.T) {
			t.Helper()
			fd, isDeclared := found[p], slices.Contains(declared, p)
			unknown := cell.UnknownOf(p)
			switch {
			case fd != nil && !isDeclared:
				t.Errorf("%s fails under %s:\n%s", p, f, describe(t, p, fd))
			case fd != nil:
				t.Logf("%s fails under %s, as %s declares:\n%s", p, f, d.Name(), describe(t, p, fd))
			case cell.Harness != nil:
				t.Errorf("%s is not judged under %s: the cell stopped at a harness error after %d runs (family=%s says where) (%s)", p, f, cell.Runs, f, rerun(t, c))
			case unknown > 0 && c.tolerant:
				t.Logf("%s is unknown under %s: %d of %d runs could not be judged (%s); tolerated (TolerateUnknown)", p, f, unknown, cell.Runs, cell.UnknownWhy)
			case unknown > 0:
				t.Errorf("%s is unknown under %s: %d of %d runs could not be judged (%s), and an unknown run is not a pass (%s)",
					p, f, unknown, cell.Runs, cell.UnknownWhy, rerun(t, c))
			case isDeclared && c.strict:
				t.Errorf("%s declares that %s fails under %s, but no failure showed in %s, a budget of %d schedules (%s) (%s)", d.Name(), p, f, ran, c.n, c.from, rerun(t, c))
			case isDeclared:
				t.Logf("%s declares that %s fails under %s; no failure showed in %s", d.Name(), p, f, ran)
			case cell.Runs > 0 && cell.NotJudgedBy[p] == cell.Runs:
				// A skip, not a pass: go test -v and -json list it as
				// SKIP, and TestDesign says it once without -v.
				nj := notJudgedCell{prop: p, family: f, why: notJudgedWhy(w, d, f, c, p)}
				notJudged = append(notJudged, nj)
				t.Skipf("%s not judged under %s: none of %s gave it anything to judge: %s", p, f, ran, nj.why)
			default:
				t.Logf("%s held in %s", p, ran)
			}
		})
	}
	return notJudged
}

// notJudgedWhy is the reason the property's checker gives for not judging
// p in the family's first run: it names what the design lacks (for
// BoundedState, faults.Bounded). One more run, made only for a property
// that no run judged.
func notJudgedWhy[D Design, S, X any](w World[D, S, X], d D, f Family, c config, p Property) string {
	for run := range cellRuns(w, d, f, MatrixOptions[D]{N: 1, Seed: c.seed, Run: c.run}.withDefaults(w.Families), nil) {
		if v, ok := w.Judge(run.hist).Verdict(p); ok && v.Reason != "" {
			return v.Reason
		}
		break
	}
	return "the design does not report what it needs"
}

// describeFinding is p's failure: its anomalies, where the schedule is,
// and the timeline, unless the subtest of printer (another property the
// same schedule fails) prints it.
func describeFinding[D Design, S, X any](t *testing.T, w World[D, S, X], d D, c config, p Property, fd *finding[S, X], printer Property) string {
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
	if f := fd.cx.Family; w.isSampled(f) {
		var failed, tries int
		if e := catch(func() { _, _, failed, tries, _ = replaySampled(w, d, s, c.run, p, true) }); e == nil {
			fmt.Fprintf(&b, "%s\n", sampledNote(f, failed, tries))
		}
	}
	switch failed := fd.cx.Report.Failed(); {
	case printer != p:
		fmt.Fprintf(&b, "it fails %s: its timeline is printed once, under prop=%s, and saved in %s\n", JoinProps(failed), printer, mdOf(fd.file))
	case len(failed) > 1:
		fmt.Fprintf(&b, "it fails %s (the other subtests print this timeline no more):\n", JoinProps(failed))
		fallthrough
	default:
		b.WriteString(Timeline(w, fd.cx.History, fd.cx.Report))
	}
	fmt.Fprintf(&b, "To reproduce (the saved file replays first): %s\n", rerun(t, c))
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
// t is not yet there) from its package directory, with the budget and seed
// its cell ran as flags: they beat any default, -short or Schedules (see
// budget), so the family's cell reruns exactly, whatever the test passes.
func rerun(t *testing.T, c config, sub ...string) string {
	parts := append(strings.Split(t.Name(), "/"), sub...)
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	dir, err := os.Getwd()
	if err != nil {
		dir = "."
	}
	return fmt.Sprintf("cd %s && go test -run '%s' -%s=%d -%s=%d .", dir, strings.Join(parts, "/"), flagSeed, c.seed, flagN, c.n)
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
