package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/props"
)

// matrixCmd is `matrix`.
func matrixCmd(args []string, regs registries, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	subj := fs.String("subject", "settle", "what the designs allocate: settle (settlements: credits exactly once) or loot (loot allocation: "+lootfaults.World.Subject+")")
	dflag := fs.String("designs", "", "comma-separated designs (default: all of the subject's; onceproof list names them)")
	fflag := fs.String("families", "", "comma-separated fault families, each one or several joined with + (default: all of the subject's, then its documented joins)")
	n := fs.Int("n", props.DefaultMatrixN, "generated schedules per cell (with -store: default "+fmt.Sprint(DefaultStoreN)+", with -subject loot "+fmt.Sprint(DefaultLootStoreN)+"); a family may scale it: a loot cell runs half of it, 15 times that under the families of rare failures, as onceproof list shows")
	seed := fs.Uint64("seed", props.DefaultMatrixSeed, "first generator seed of every cell (>= 1)")
	parallel := fs.Int("parallel", 0, "cells run at once (default: GOMAXPROCS)")
	out := fs.String("out", "", "directory for matrix.md and counterexamples/ (default: results/ (results/loot/ for -subject loot) for the full default matrix run from the module root, as make proofs does; "+
		"otherwise a fresh private directory "+filepath.Join(os.TempDir(), "onceproof-matrix-*")+" per run); only files an earlier run listed in DIR/"+manifestName+" are ever overwritten or removed, "+
		"and a symlink, another user's file or a manifest entry outside DIR makes the run refuse")
	storeFlag := fs.String("store", "", "run the ref design on a real store, a fresh one per run: "+storeForms+"; with -subject loot, the loot-ref design on "+lootStoreForms)
	lockFlag := fs.String("lock", "", "with -subject loot: run the lock service on a real Redis, "+lockForms+", its keys' ttls ended by the world's lock clock; with -store, beside its database, else with the rows' in-memory stores")
	jsonOut := fs.String("json", "", "also write the matrix as JSON (every cell's verdicts, counterexamples and coverage: engine.Matrix) to this file, or to stdout for -")
	verbose := fs.Bool("v", false, "with -store: print a store error's whole chain, not only its root cause")
	shardFlag := fs.String("shard", "", "run only shard i/n of the cells (0 <= i < n: n processes, each its own i, run every cell once) and write them to -json FILE for `onceproof merge`, which writes the matrix a single run would; a shard writes no matrix.md")
	weak := fs.Bool("allow-weak-durability", false, "with -store redis://: run on a server that does not persist every write before answering (appendonly yes, appendfsync always), which a crash of the server can make lose acknowledged claims")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	if len(pos) > 0 {
		return 0, badf("matrix takes no arguments, got %q (flags start with -)", pos)
	}
	switch {
	case *n < 1:
		return 0, badf("matrix: -n must be >= 1, got %d", *n)
	case *seed == 0:
		return 0, badf("matrix: -seed must be >= 1, got 0")
	case *parallel < 0:
		return 0, badf("matrix: -parallel must be >= 0, got %d", *parallel)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	mr := matrixRun{fs: fs, set: set, n: *n, seed: *seed, parallel: *parallel, families: *fflag, out: *out,
		jsonOut: *jsonOut, verbose: *verbose, stdout: stdout, stderr: stderr}
	if set["shard"] {
		sh, err := engine.ParseShard(*shardFlag)
		switch {
		case err != nil:
			return 0, badf("matrix: -shard: %v", err)
		case *jsonOut == "":
			return 0, badf("matrix: -shard writes its cells with -json FILE (for onceproof merge), and no -json was given")
		case set["out"]:
			return 0, badf("matrix: -shard writes no matrix.md: give -out to onceproof merge instead")
		}
		mr.shard = &sh
	}
	// With -json -, the JSON owns stdout and every human line goes to
	// stderr.
	mr.jsonW = stdout
	if *jsonOut == "-" {
		mr.stdout = stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	mr.ctx, mr.stop = ctx, stop

	switch *subj {
	case "loot":
		sub := lootSubject(regs.loot)
		if *storeFlag == "" && *lockFlag == "" {
			ds, err := selectDesigns(sub, *dflag)
			if err != nil {
				return 0, err
			}
			return runMatrix(sub, ds, mr)
		}
		var sp storeSpec
		var err error
		if *storeFlag != "" {
			if sp, err = parseLootStore(*storeFlag); err != nil {
				return 0, err
			}
		}
		if *lockFlag != "" {
			if sp.lock, err = parseLock(*lockFlag); err != nil {
				return 0, err
			}
			// go-redis logs some failures itself; the command reports them.
			goredis.SetLogger(silent{})
		}
		ld, err := lootStoreDesigns(ctx, sp, *dflag, *verbose)
		if err != nil {
			return 0, interruptedOr(ctx, err)
		}
		mr.store, mr.sp = ld, sp
		mr.stall = storeStall
		if !set["n"] {
			mr.n = DefaultLootStoreN
		}
		code, err := runMatrix(sub, ld.designs(), mr)
		// Every run's schema or database goes, whatever the matrix said.
		if derr := ld.Done(); derr != nil && err == nil {
			return 0, fmt.Errorf("matrix: removing the runs' databases and keys (%s): %s", sp, storeError(derr, sp, *verbose))
		}
		return code, err
	case "settle":
		if *lockFlag != "" {
			return 0, badf("matrix: -lock is the loot allocation's lock service: it needs -subject loot")
		}
	default:
		return 0, badf("matrix: -subject %q (want settle or loot)", *subj)
	}
	sub := settleSubject(regs.settle)
	var designs []faults.Design
	if *storeFlag != "" {
		sp, err := parseStore(*storeFlag)
		if err != nil {
			return 0, err
		}
		// go-redis logs some failures itself; the command reports them.
		goredis.SetLogger(silent{})
		sp.weak = *weak
		sd, done, err := storeDesign(ctx, sp, *dflag, *verbose)
		if err != nil {
			return 0, interruptedOr(ctx, err)
		}
		defer done()
		designs = []faults.Design{sd}
		mr.store, mr.sp = sd, sp
		mr.stall = storeStall
		if !set["n"] {
			mr.n = DefaultStoreN
		}
	} else if designs, err = selectDesigns(sub, *dflag); err != nil {
		return 0, err
	}
	return runMatrix(sub, designs, mr)
}

// interruptedOr is err, or the interrupt that caused it: a Ctrl-C during
// the probe of a store cancels its context, which is not the store's
// fault (exit 130, not 1).
func interruptedOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return exitError{exitInterrupted, "interrupted before the matrix started: nothing was written, and the probe's store was removed"}
	}
	return err
}

// matrixRun is what a matrix command was asked, beside its subject.
type matrixRun struct {
	fs                    *flag.FlagSet
	set                   map[string]bool
	n                     int
	seed                  uint64
	parallel              int
	families, out         string
	jsonOut               string
	verbose               bool
	stall                 time.Duration
	stdout, stderr, jsonW io.Writer
	ctx                   context.Context
	stop                  func()
	// store and sp are -store's: the design on the user's store and where
	// it is.
	store storeRows
	sp    storeSpec
	// shard, if set, is -shard's: run those cells and write them as a
	// shard file, nothing else.
	shard *engine.Shard
}

// storeRows is a design on a real store, as the command reports it
// (refdesign.StoreDesign, lootref.StoreDesign).
type storeRows interface {
	Name() string
	Runs() int
	Live() int
	Err() error
}

// runMatrix runs sub's matrix of designs as mr says and writes it.
func runMatrix[D engine.Design, S, X any](sub subject[D, S, X], designs []D, mr matrixRun) (int, error) {
	w, sd := sub.world, mr.store
	opt := engine.MatrixOptions[D]{Designs: designs, N: mr.n, Seed: mr.seed, Parallel: mr.parallel, Context: mr.ctx}
	opt.Run.Stall = mr.stall
	var err error
	wrote := false
	if opt.Families, err = selectFamilies(w, mr.families); err != nil {
		return 0, err
	}
	// The committed results are the full default matrix, and only `make
	// proofs` (or this command with no other flag than -subject, from the
	// module root) writes them. Any other run is a check, and goes
	// elsewhere unless told.
	set := mr.set
	full := fullMatrix(func(name string) bool { return set[name] })
	if mr.shard != nil {
		opt.Shard = *mr.shard
		return runShard(sub, opt, mr)
	}
	out, label := mr.out, "-out "+mr.out
	if !set["out"] {
		if out, err = defaultOut(sub.name, sub.results, full, sd); err != nil {
			return 0, err
		}
		label = out
		if out != sub.results {
			// The fresh directory goes again if the run ends before
			// writing in it (interrupted, a store failed): Remove takes
			// only an empty directory.
			defer func() {
				if !wrote {
					os.Remove(out)
				}
			}()
		}
	}
	od, err := openOut(out, label)
	if err != nil {
		return 0, err
	}
	defer od.Close()

	m, err := execute(w, opt, mr)
	if err != nil {
		return 0, err
	}
	wrote = true // from here the directory holds, or may hold, results
	return writeMatrix(sub, m, od, out, byLine(out == sub.results && full, commandLine(mr.fs, set, mr.sp)), mr)
}

// execute runs the matrix opt describes on w, with the progress line on
// stderr; an interrupt or a failed store is its error (nothing is to be
// written then).
func execute[D engine.Design, S, X any](w engine.World[D, S, X], opt engine.MatrixOptions[D], mr matrixRun) (engine.Matrix[S, X], error) {
	stdout, stderr, sd := mr.stdout, mr.stderr, mr.store
	start := time.Now()
	pg := newProgress(stderr, sd)
	opt.Progress = pg.update
	m := engine.RunMatrix(w, opt)
	pg.end()
	if mr.ctx.Err() != nil {
		mr.stop() // a second interrupt ends the process at once
		what := "nothing was written"
		if sd != nil {
			what = fmt.Sprintf("nothing was written, and the %d runs' stores (%s) were removed", sd.Runs(), mr.sp)
		}
		return m, exitError{exitInterrupted, "interrupted: " + what}
	}
	if sd != nil {
		// A store that failed to open or clean up makes its runs' verdicts
		// meaningless (every call failed): report that, not the matrix.
		if err := sd.Err(); err != nil {
			return m, fmt.Errorf("matrix: the store failed, no results written: %s", storeError(err, mr.sp, mr.verbose))
		}
		if live := sd.Live(); live != 0 {
			return m, fmt.Errorf("matrix: %d runs' stores were never closed (a harness bug)", live)
		}
		fmt.Fprintf(stdout, "%s: %d runs, each on a fresh store, in %.1fs\n", sd.Name(), sd.Runs(), time.Since(start).Seconds())
	}
	return m, nil
}

// fullMatrix reports whether a matrix command whose flags given are those
// set says runs the full default matrix, the committed results' command:
// no flag that narrows it or moves it onto a store (-store, and -lock,
// which runs the rows on a real lock).
func fullMatrix(set func(name string) bool) bool {
	for _, f := range []string{"designs", "families", "n", "seed", "store", "lock"} {
		if set(f) {
			return false
		}
	}
	return true
}

// byLine is how a matrix's files name their origin: committedBy for the
// committed results (the full default matrix written to results/),
// else the command that made it.
func byLine(committed bool, command string) string {
	if committed {
		return committedBy
	}
	return command
}

// writeMatrix writes m's files to od (at out) naming by as their origin,
// and -json's, then reports: the files, and every cell that disagrees
// with its design's declaration (exit 1 if any).
func writeMatrix[D engine.Design, S, X any](sub subject[D, S, X], m engine.Matrix[S, X], od *outDir, out, by string, mr matrixRun) (int, error) {
	stdout := mr.stdout
	if err := od.writeTo(files(sub, m, filepath.ToSlash(out), by)); err != nil {
		return 0, err
	}
	if mr.jsonOut != "" {
		if err := writeJSON(mr, m); err != nil {
			return 0, err
		}
	}
	fmt.Fprintf(stdout, "wrote %s (%d designs x %d families; schedules per cell: %s)\n",
		filepath.Join(out, "matrix.md"), len(m.Rows), len(m.Families), cellBudgets(sub.world, m))
	ms := m.Mismatches()
	if len(ms) == 0 {
		return exitOK, nil
	}
	fmt.Fprintf(stdout, "%d cells disagree with their design's declaration:\n", len(ms))
	missed := 0
	for _, x := range ms {
		fmt.Fprintln(stdout, "  "+x.String())
		// A declared failure that did not show, and nothing undeclared.
		if x.Unknown == 0 && !slices.Equal(x.Got, x.Want) && !slices.ContainsFunc(x.Got, func(p engine.Property) bool { return !slices.Contains(x.Want, p) }) {
			missed++
		}
	}
	if missed > 0 && m.N < props.DefaultMatrixN {
		fmt.Fprintf(stdout, "hint: %d of them are declared failures that did not show in %d schedules per cell; the declarations are derived for the default -n %d (rerun with -n %d or more)\n",
			missed, m.N, props.DefaultMatrixN, props.DefaultMatrixN)
	}
	return exitFailed, nil
}

// writeJSON writes v to -json's file, or to stdout for -.
func writeJSON(mr matrixRun, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if mr.jsonOut == "-" {
		_, err := mr.jsonW.Write(append(b, '\n'))
		return err
	}
	if err := os.WriteFile(mr.jsonOut, b, 0o644); err != nil {
		return badf("%s: -json %s: %v", mr.fs.Name(), mr.jsonOut, err)
	}
	return nil
}

// commandLine is the command that produced a non-default matrix, for its
// header: every flag given that changes what is written, store redacted.
func commandLine(fs *flag.FlagSet, set map[string]bool, sp storeSpec) string {
	return formatCommand(commandFlags(fs, set, sp))
}

// commandFlags are commandLine's flags, in the flag set's (name) order.
func commandFlags(fs *flag.FlagSet, set map[string]bool, sp storeSpec) []commandFlag {
	var out []commandFlag
	fs.VisitAll(func(f *flag.Flag) {
		if !set[f.Name] || f.Name == "json" || f.Name == "v" || f.Name == "parallel" || f.Name == "shard" {
			return
		}
		v := f.Value.String()
		switch f.Name {
		case "store":
			v = sp.store()
		case "lock":
			v = sp.lockAddr()
		}
		out = append(out, commandFlag{f.Name, v})
	})
	return out
}

// commandFlag is one flag of a command line, as given.
type commandFlag struct{ Name, Value string }

func formatCommand(flags []commandFlag) string {
	parts := []string{"onceproof matrix"}
	for _, f := range flags {
		parts = append(parts, "-"+f.Name, shellQuote(f.Value))
	}
	return strings.Join(parts, " ")
}

// shellQuote quotes v for a shell if it needs it.
func shellQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n'\"\\$`*?&;|<>()[]{}!#~") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// selectDesigns parses -designs: names of sub's designs (default: all).
func selectDesigns[D engine.Design, S, X any](sub subject[D, S, X], list string) ([]D, error) {
	if list == "" {
		return sub.designs, nil
	}
	var out []D
	for _, name := range strings.Split(list, ",") {
		d, err := sub.find(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// selectFamilies parses -families: each a family of w's or several joined
// with '+' (late+crash); default w's Columns, its families and then its
// documented joins.
func selectFamilies[D engine.Design, S, X any](w engine.World[D, S, X], list string) ([]engine.Family, error) {
	if list == "" {
		return w.Columns(), nil
	}
	var out []engine.Family
	for _, name := range strings.Split(list, ",") {
		f := engine.Family(strings.TrimSpace(name))
		if err := w.CheckFamily(f); err != nil {
			return nil, badf("matrix: -families: %v", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// silent is a go-redis logger that drops its lines.
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}

// defaultOut is where a run without -out writes: the committed results
// (dir) for the full default matrix run from the module root, and
// otherwise a fresh directory os.MkdirTemp creates, mode 0700 and with an
// unpredictable name, under the temporary directory: no other user can
// create it first, plant in it or read it, and two runs (of two users, or
// one user's in parallel) never share one. A stable per-user place (under
// os.UserCacheDir) would spare the temporary directory a folder per run,
// but two runs of one user there would clobber each other's results, and
// the run prints the path it wrote anyway ("wrote DIR/matrix.md").
func defaultOut(subject, dir string, full bool, sd storeRows) (string, error) {
	pattern := "onceproof-matrix-"
	switch {
	case sd != nil:
		pattern += strings.ReplaceAll(sd.Name(), string(os.PathSeparator), "_") + "-"
	case full && atModuleRoot():
		return dir, nil
	case subject != "settle":
		pattern += subject + "-"
	}
	out, err := os.MkdirTemp("", pattern+"*")
	if err != nil {
		return "", fmt.Errorf("matrix: creating a directory for the results (or give -out): %w", err)
	}
	return out, nil
}

// cellBudgets says how many schedules m's cells ran, family by family
// grouped by count, in column order: "200 (clean, duplicate, ...), 10
// (long-history), all 34581 (small-scope)": each family's largest cell's
// Runs (a cell whose run stalled stops early; an enumeration's
// interleavings vary by design), "all" for an exhaustive family.
func cellBudgets[D engine.Design, S, X any](w engine.World[D, S, X], m engine.Matrix[S, X]) string {
	var order []string
	groups := map[string][]string{}
	for j, f := range m.Families {
		most := 0
		for _, r := range m.Rows {
			most = max(most, r.Cells[j].Runs)
		}
		label := fmt.Sprint(most)
		if _, _, ok := w.Exhaustive(f); ok {
			label = "all " + label
		}
		if groups[label] == nil {
			order = append(order, label)
		}
		groups[label] = append(groups[label], string(f))
	}
	parts := make([]string, len(order))
	for i, l := range order {
		parts[i] = l + " (" + strings.Join(groups[l], ", ") + ")"
	}
	return strings.Join(parts, ", ")
}
