package engine

import (
	"context"
	"fmt"
	"iter"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// DefaultMatrixSeed is the first generator seed of every cell: cell i's
// k-th schedule is the world's Generate(family, DefaultMatrixSeed+k), the same
// for every design, so the rows compare designs on the same input.
const DefaultMatrixSeed uint64 = 1

// Why 200: the budget is a minute for the whole committed matrix on 2
// cores. A run of a generated schedule costs about 100 us, so 200 per cell
// is 20 ms per cell before shrinking, and a few hundred cells with their
// shrinks (a few hundred runs per counterexample) stay within seconds.
// Raising it finds rarer failures, and the designs' declarations must then
// follow.

// DefaultMatrixN is the schedules per cell by default (RunMatrix, RunCell,
// TestDesign); a world may run fewer or more per cell (World.Runs).
const DefaultMatrixN = 200

// MatrixOptions configures RunMatrix for designs of type D.
type MatrixOptions[D any] struct {
	Designs      []D
	Families     []Family // default: the world's Columns (Families, then Joins)
	N            int      // schedules per cell; default DefaultMatrixN
	Seed         uint64   // first generator seed; default DefaultMatrixSeed
	Parallel     int      // cells run at once; default GOMAXPROCS
	ShrinkBudget int      // per counterexample; default DefaultShrinkBudget
	Run          RunOptions
	// Shard, if set, runs only that part of the cells (Shard.Has); the
	// others stay zero (Cell.Ran false) for MergeShards to fill from the
	// other shards.
	Shard Shard
	// Progress, if set, is called after every run of every cell and after
	// each cell, from one goroutine at a time, with how far the matrix is
	// (of this shard).
	Progress func(MatrixProgress)
	// ran, if set, is called after each run of a cell (RunMatrix's
	// progress).
	ran func()
	// Context, if set, stops the matrix early once it is done: no new run
	// starts (a run in flight finishes, so its cluster is closed as usual)
	// and the cells are incomplete. The caller must not use the Matrix
	// then; a command uses it to clean up on an interrupt.
	Context context.Context
	_       struct{}
}

// MatrixProgress is how far a RunMatrix is, for a progress line.
type MatrixProgress struct {
	Cells, CellsDone int
	// Runs is the generated schedules of every cell (World.Runs of its
	// family), RunsDone those run so far. Exhaustive is the cells whose
	// runs cannot be counted ahead (an enumeration), ExhaustiveRuns what
	// they ran so far. Shrinking runs are not counted: a cell's
	// counterexamples take a few hundred each.
	Runs, RunsDone, Exhaustive, ExhaustiveRuns int
	// Last is the cell of the run or cell just done: "design under family".
	Last string
}

// Matrix is every design's verdict under every family.
type Matrix[S, X any] struct {
	N        int
	Seed     uint64
	Families []Family
	Rows     []Row[S, X]
}

// Row is one design's cells, in Families order.
type Row[S, X any] struct {
	Design      string
	Declaration Declaration
	Cells       []Cell[S, X]
}

// Cell is one design under one family: the union of the properties that
// failed over N schedules, and a minimal counterexample for them.
type Cell[S, X any] struct {
	Design  string
	Family  Family
	Seed    uint64 // the first run's generator seed; run k used Seed+k
	Runs    int
	Unknown int // runs some property could not judge (budget ran out, design blocked)
	// UnknownBy counts, per property, the runs it could not judge;
	// UnknownWhy is the first such run's reason.
	UnknownBy  map[Property]int `json:",omitempty"`
	UnknownWhy string           `json:",omitempty"`
	// NotJudgedBy counts, per property, the runs that gave it nothing to
	// judge (a design without faults.Bounded, for BoundedState).
	NotJudgedBy map[Property]int `json:",omitempty"`
	// Coverage is what the cell's runs reached, summed; Unexercised what
	// the family exists to make happen and no run reached (the cell then
	// tested nothing of what its column claims, and fails).
	Coverage    Coverage `json:",omitempty"`
	Unexercised []string `json:",omitempty"`
	// Scope, for an exhaustive family (World.Exhaustive), is the scope its
	// runs covered; empty for a sampled cell.
	Scope    string     `json:",omitempty"`
	Failed   []Property // union over the runs, in report order
	Expected []Property // what the design declares, in report order
	// Counterexamples: the first is shrunk toward the first property of
	// Failed; one more for each property of Failed the earlier ones do not
	// show.
	Counterexamples []Counterexample[S, X]

	// Harness is the cell's harness error: a panic outside the design's
	// Deliver and Recover (the engine's bug or a world's, not a verdict on
	// the design). The cell stopped at that run.
	Harness *HarnessError `json:",omitempty"`
}

// Counterexample is a shrunk failing schedule and its run.
type Counterexample[S, X any] struct {
	Name     string // file stem: <design>--<family>[--<property>]
	Design   string
	Family   Family
	Seed     uint64 // generator seed of the schedule it was shrunk from
	Schedule S
	History  History[S, X]
	Report   Report
}

// UnknownOf is how many runs could not judge p.
func (c Cell[S, X]) UnknownOf(p Property) int { return c.UnknownBy[p] }

// Holds reports whether the cell showed no failure, no unknown run, and
// no harness error, and exercised its family.
func (c Cell[S, X]) Holds() bool {
	return len(c.Failed) == 0 && c.Unknown == 0 && len(c.Unexercised) == 0 && c.Harness == nil
}

// Text is the cell as the matrix shows it.
func (c Cell[S, X]) Text() string {
	switch {
	case c.Harness != nil:
		return fmt.Sprintf("harness error: %s, seed %d", c.Harness.Value, c.Harness.Seed)
	case len(c.Failed) > 0:
		return "fails: " + JoinProps(c.Failed)
	case c.Unknown > 0:
		return fmt.Sprintf("unknown: %d of %d runs ran out of budget", c.Unknown, c.Runs)
	case len(c.Unexercised) > 0:
		return fmt.Sprintf("not exercised: no %s in %d runs", strings.Join(c.Unexercised, ", "), c.Runs)
	case c.Scope != "":
		return fmt.Sprintf("holds: all %d", c.Runs)
	}
	return "holds"
}

// Mismatch is a cell whose verdict differs from what its design declares.
type Mismatch struct {
	Design      string
	Family      Family
	Want        []Property
	Got         []Property
	Unknown     int
	Unexercised []string
	Runs        int
	// Harness is the cell's harness error, which overrides the rest.
	Harness *HarnessError
}

func (m Mismatch) String() string {
	if m.Harness != nil {
		return fmt.Sprintf("%s under %s: %v", m.Design, m.Family, *m.Harness)
	}
	want := "hold"
	if len(m.Want) > 0 {
		want = "fail " + JoinProps(m.Want)
	}
	got := "holds"
	if len(m.Got) > 0 {
		got = "fails " + JoinProps(m.Got)
	} else if m.Unknown > 0 {
		got = fmt.Sprintf("is unknown (%d of %d runs ran out of budget)", m.Unknown, m.Runs)
	}
	if len(m.Unexercised) > 0 {
		got += fmt.Sprintf(", and its runs never reached what the family exists for (no %s in %d runs)", strings.Join(m.Unexercised, ", "), m.Runs)
	}
	return fmt.Sprintf("%s under %s: declared to %s, %s", m.Design, m.Family, want, got)
}

// Mismatch reports whether the cell disagrees with its design's declaration:
// an undeclared failure, a declared failure that did not show (the checker
// lost its teeth, or the budget is too small to find it), or any run that
// could not be judged (an unknown run is not a pass, whatever is declared),
// or a harness error.
func (c Cell[S, X]) Mismatch() bool {
	return c.Harness != nil || c.Unknown > 0 || len(c.Unexercised) > 0 || !slices.Equal(c.Failed, c.Expected)
}

// Mismatches lists the cells that disagree with their design's declaration
// (Cell.Mismatch).
func (m Matrix[S, X]) Mismatches() []Mismatch {
	var out []Mismatch
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			if c.Mismatch() {
				out = append(out, Mismatch{Design: c.Design, Family: c.Family, Want: c.Expected, Got: c.Failed, Unknown: c.Unknown, Unexercised: c.Unexercised, Runs: c.Runs, Harness: c.Harness})
			}
		}
	}
	return out
}

// RunMatrix runs every design of world w under every family, N seeded
// schedules per cell, and shrinks each cell's failures to minimal
// counterexamples. It is deterministic: the same options give the same
// Matrix, byte for byte once rendered, whatever Parallel is (concurrent
// groups are interleaved by the schedules' Switches).
func RunMatrix[D Design, S, X any](w World[D, S, X], opt MatrixOptions[D]) Matrix[S, X] {
	w = w.Complete()
	opt = opt.withDefaults(w.Columns())
	m := Matrix[S, X]{N: opt.N, Seed: opt.Seed, Families: slices.Clone(opt.Families)}
	type job struct{ row, col int }
	var jobs []job
	for i, d := range opt.Designs {
		row := Row[S, X]{Design: d.Name(), Declaration: DeclarationOf(d), Cells: make([]Cell[S, X], len(opt.Families))}
		m.Rows = append(m.Rows, row)
		for j := range opt.Families {
			if opt.Shard.Has(i, j, len(opt.Designs)) {
				jobs = append(jobs, job{i, j})
			}
		}
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	var mu sync.Mutex
	pr := MatrixProgress{Cells: len(jobs)}
	for _, j := range jobs {
		if _, _, ok := w.Exhaustive(opt.Families[j.col]); ok {
			pr.Exhaustive++
		} else {
			pr.Runs += w.Runs(opt.Families[j.col], opt.N)
		}
	}
	for range opt.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				o := opt
				last := opt.Designs[j.row].Name() + " under " + string(opt.Families[j.col])
				_, _, exhaustive := w.Exhaustive(opt.Families[j.col])
				if opt.Progress != nil {
					o.ran = func() {
						mu.Lock()
						if exhaustive {
							pr.ExhaustiveRuns++
						} else {
							pr.RunsDone++
						}
						pr.Last = last
						opt.Progress(pr)
						mu.Unlock()
					}
				}
				c := runCell(w, opt.Designs[j.row], opt.Families[j.col], o)
				mu.Lock()
				m.Rows[j.row].Cells[j.col] = c
				pr.CellsDone++
				pr.Last = last
				if opt.Progress != nil {
					opt.Progress(pr)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if opt.Context.Err() != nil {
			break
		}
		ch <- j
	}
	close(ch)
	wg.Wait()
	return m
}

// Check judges design d under opt.Families (opt.Designs is ignored), as
// RunMatrix does, its cells run in parallel: each cell's verdicts, minimal
// counterexamples, coverage and whether it agrees with d's declaration.
// TestDesign reports from it; `onceproof matrix -json` writes a Matrix of
// such rows.
func Check[D Design, S, X any](w World[D, S, X], d D, opt MatrixOptions[D]) Row[S, X] {
	w = w.Complete()
	opt.Designs = []D{d}
	return RunMatrix(w, opt).Rows[0]
}

// RunCell runs one design under one family as RunMatrix does.
func RunCell[D Design, S, X any](w World[D, S, X], d D, f Family, opt MatrixOptions[D]) Cell[S, X] {
	w = w.Complete()
	return runCell(w, d, f, opt.withDefaults(w.Columns()))
}

// withDefaults fills in the defaults MatrixOptions documents.
func (opt MatrixOptions[D]) withDefaults(families []Family) MatrixOptions[D] {
	if opt.Families == nil {
		opt.Families = families
	}
	if opt.N <= 0 {
		opt.N = DefaultMatrixN
	}
	if opt.Seed == 0 {
		opt.Seed = DefaultMatrixSeed
	}
	if opt.Parallel <= 0 {
		opt.Parallel = runtime.GOMAXPROCS(0)
	}
	if opt.Context == nil {
		opt.Context = context.Background()
	}
	return opt
}

func runCell[D Design, S, X any](w World[D, S, X], d D, f Family, opt MatrixOptions[D]) (c Cell[S, X]) {
	c = Cell[S, X]{Design: d.Name(), Family: f, Seed: opt.Seed}
	// A panic outside the design's Deliver and Recover (Run raises the
	// engine's as a HarnessError; the world's generator, properties and
	// coverage run here) ends the cell as its harness error, naming the
	// run in flight, instead of the process: the other cells run on.
	var cur inFlight[S]
	defer func() {
		if v := recover(); v != nil {
			c.Harness = harnessError(w, d, f, cur, asHarnessError(v))
		}
	}()
	c.Expected = DeclarationOf(d).Expected(f, w.Properties)
	type failing struct {
		seed   uint64
		sched  S
		hist   History[S, X]
		failed []Property
	}
	var fails []failing
	union := map[Property]bool{}
	c.Coverage = Coverage{}
	if _, scope, ok := w.Exhaustive(f); ok {
		c.Scope = scope
	}
	for run := range cellRuns(w, d, f, opt, &cur) {
		seed, s, h := run.seed, run.sched, run.hist
		r := w.Judge(h)
		c.Runs++
		if opt.ran != nil {
			opt.ran()
		}
		c.Coverage.Merge(w.Coverage(h))
		if r.Unknown() {
			c.Unknown++
			for _, v := range r {
				if v.Outcome == Unknown {
					if c.UnknownBy == nil {
						c.UnknownBy = map[Property]int{}
						c.UnknownWhy = fmt.Sprintf("seed %d: %s", seed, v.Reason)
					}
					c.UnknownBy[v.Property]++
				}
			}
		}
		for _, v := range r {
			if v.Outcome == NotJudged {
				if c.NotJudgedBy == nil {
					c.NotJudgedBy = map[Property]int{}
				}
				c.NotJudgedBy[v.Property]++
			}
		}
		if fl := r.Failed(); len(fl) > 0 {
			// Only the first run failing each property is shrunk (below):
			// a run that fails nothing new is not kept, so a cell does not
			// hold every failing history (each of long-history's deep
			// runs is 100 MB).
			if slices.ContainsFunc(fl, func(p Property) bool { return !union[p] }) {
				fails = append(fails, failing{seed, s, h, fl})
			}
			for _, p := range fl {
				union[p] = true
			}
		}
		if h.Stalled {
			// Every further run could cost the watchdog's whole stall:
			// one blocked run is the cell's verdict (Responsive fails).
			break
		}
	}
	for _, p := range w.Properties {
		if union[p] {
			c.Failed = append(c.Failed, p)
		}
	}
	if c.Runs > 0 && opt.Context.Err() == nil {
		c.Unexercised = Unexercised(f, w.Exercises, c.Coverage)
	}
	if len(fails) == 0 {
		return c
	}
	// shows: r fails every target property and nothing the cell's
	// generated schedules never failed. The second half keeps the shrinker
	// inside the family's world: dropping a settlement can, say, open a
	// gap in a player's sequence numbers that no sender would make, and a
	// counterexample must not rest on that.
	shows := func(r Report, target []Property) bool {
		for _, p := range target {
			if r.Outcome(p) != Fails {
				return false
			}
		}
		for _, p := range r.Failed() {
			if !union[p] {
				return false
			}
		}
		return true
	}
	shrinkTo := func(fl failing, target []Property, name string) {
		s := fl.sched
		if !fl.hist.Stalled { // a blocked candidate costs a whole stall: keep it as found
			s = Shrink(w, fl.sched, func(s S) bool {
				cur.set(fl.seed, s)
				return opt.Context.Err() == nil && shows(w.Judge(w.Run(d, s, opt.Run)), target)
			}, opt.ShrinkBudget)
		}
		cur.set(fl.seed, s)
		h := w.Run(d, s, opt.Run)
		r := w.Judge(h)
		if !shows(r, target) {
			// Only a design that is not deterministic on one schedule
			// (it reads the clock, randomness, or map order) gets here:
			// keep the run that failed, unshrunk.
			s, h, r = fl.sched, fl.hist, w.Judge(fl.hist)
		}
		c.Counterexamples = append(c.Counterexamples, Counterexample[S, X]{
			Name: name, Design: d.Name(), Family: f, Seed: fl.seed, Schedule: s, History: h, Report: r,
		})
	}
	// One counterexample per property, smallest first: the first failing
	// property (in report order) gets <design>--<family>; each property the
	// counterexamples so far do not show gets its own file. Shrinking toward
	// one property at a time keeps each to a handful of deliveries (a
	// dishonest "duplicate" ack usually shows NoLoss and HonestAck together
	// in the same few events anyway).
	stem := FileSafe(d.Name()) + "--" + string(f)
	covered := map[Property]bool{}
	for _, p := range c.Failed {
		if covered[p] {
			continue
		}
		for _, fl := range fails {
			if !slices.Contains(fl.failed, p) {
				continue
			}
			name := stem
			if len(c.Counterexamples) > 0 {
				name = stem + "--" + string(p)
			}
			shrinkTo(fl, []Property{p}, name)
			for _, q := range c.Counterexamples[len(c.Counterexamples)-1].Report.Failed() {
				covered[q] = true
			}
			break
		}
	}
	return c
}

// cellRun is one run of a cell: the seed that names its schedule, the
// schedule, and its history.
type cellRun[S, X any] struct {
	seed  uint64
	sched S
	hist  History[S, X]
}

// inFlight is the run a cell is making, for its harness error: the seed
// that names it and, once generated, its schedule.
type inFlight[S any] struct {
	seed  uint64
	sched S
	has   bool // sched is set: Generate returned
}

func (x *inFlight[S]) set(seed uint64, s S) { x.seed, x.sched, x.has = seed, s, true }

// harnessError is e naming x, the run of design d under family f that it
// stopped, with x's schedule as a .sched file that replays it.
func harnessError[D Design, S, X any](w World[D, S, X], d D, f Family, x inFlight[S], e HarnessError) *HarnessError {
	e.Design, e.Family, e.Seed = d.Name(), f, x.seed
	if x.has {
		// A world that cannot format its own schedule must not turn the
		// report into a second panic: the seed still names the run.
		if fe := catch(func() { e.Schedule = FormatSchedFile(w, SchedFile[S]{Design: d.Name(), Schedule: x.sched}) }); fe != nil {
			e.Schedule = ""
		}
	}
	return &e
}

// cellRuns yields the runs of a cell, each with the seed that names its
// schedule: for a generated family, w.Generate(f, opt.Seed+k) for k below
// w.Runs(f, opt.N); for an exhaustive one (w.Exhaustive), every schedule
// of it (the seed is its position, from 1) and, for a concurrent one,
// every interleaving of it. It stops when the context is done. cur, if
// not nil, is set to each run before it runs.
func cellRuns[D Design, S, X any](w World[D, S, X], d D, f Family, opt MatrixOptions[D], cur *inFlight[S]) iter.Seq[cellRun[S, X]] {
	if cur == nil {
		cur = new(inFlight[S])
	}
	var seed uint64
	run := func(s S, o RunOptions) History[S, X] {
		cur.set(seed, s)
		return w.Run(d, s, o)
	}
	return func(yield func(cellRun[S, X]) bool) {
		all, _, exhaustive := w.Exhaustive(f)
		if !exhaustive {
			for k := 0; k < w.Runs(f, opt.N) && opt.Context.Err() == nil; k++ {
				seed = opt.Seed + uint64(k)
				*cur = inFlight[S]{seed: seed} // Generate may panic too
				s := w.Generate(f, seed)
				if !yield(cellRun[S, X]{seed, s, run(s, opt.Run)}) {
					return
				}
			}
			return
		}
		seed = 0
		for s := range all {
			seed++
			if opt.Context.Err() != nil {
				return
			}
			if !w.Frame(&s).Concurrent {
				if !yield(cellRun[S, X]{seed, s, run(s, opt.Run)}) {
					return
				}
				continue
			}
			for s, h := range Interleavings(s, w.Frame, run, opt.Run) {
				if !yield(cellRun[S, X]{seed, s, h}) {
					return
				}
			}
		}
	}
}

// Row returns the row of design name.
func (m Matrix[S, X]) Row(name string) (Row[S, X], bool) {
	for _, r := range m.Rows {
		if r.Design == name {
			return r, true
		}
	}
	return Row[S, X]{}, false
}
