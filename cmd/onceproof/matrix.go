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
	"strings"
	"sync"
	"syscall"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
)

// matrixCmd is `matrix`.
func matrixCmd(args []string, designs impls.Registry, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	dflag := fs.String("designs", "", "comma-separated designs (default: all; onceproof list names them)")
	fflag := fs.String("families", "", "comma-separated fault families, each one or several joined with + (default: all)")
	n := fs.Int("n", props.DefaultMatrixN, "generated schedules per cell (with -store: default "+fmt.Sprint(DefaultStoreN)+")")
	seed := fs.Uint64("seed", props.DefaultMatrixSeed, "first generator seed of every cell (>= 1)")
	parallel := fs.Int("parallel", 0, "cells run at once (default: GOMAXPROCS)")
	out := fs.String("out", "", "directory for matrix.md and counterexamples/ (default: results/ for the full default matrix run from the module root, as make proofs does; "+
		"otherwise "+filepath.Join(os.TempDir(), "onceproof", "matrix")+"); only files an earlier run listed in DIR/"+manifestName+" are ever overwritten or removed")
	storeFlag := fs.String("store", "", "run the ref design on a real store, a fresh one per run: "+storeForms)
	jsonOut := fs.String("json", "", "also write the matrix as JSON (every cell's verdicts, counterexamples and coverage: props.Matrix) to this file, or to stdout for -")
	verbose := fs.Bool("v", false, "with -store: print a store error's whole chain, not only its root cause")
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
	// With -json -, the JSON owns stdout and every human line goes to
	// stderr.
	jsonW := stdout
	if *jsonOut == "-" {
		stdout = stderr
	}
	opt := props.MatrixOptions{N: *n, Seed: *seed, Parallel: *parallel}
	if opt.Families, err = selectFamilies(*fflag); err != nil {
		return 0, err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt.Context = ctx

	var sd *StoreDesign
	var sp storeSpec
	if *storeFlag != "" {
		if sp, err = parseStore(*storeFlag); err != nil {
			return 0, err
		}
		// go-redis logs some failures itself; the command reports them.
		goredis.SetLogger(silent{})
		var done func() error
		sp.weak = *weak
		if sd, done, err = storeDesign(ctx, sp, *dflag, *verbose); err != nil {
			return 0, err
		}
		defer done()
		opt.Designs = []faults.Design{sd}
		opt.Run.Stall = storeStall
		if !set["n"] {
			opt.N = DefaultStoreN
		}
	} else if opt.Designs, err = selectDesigns(designs, *dflag); err != nil {
		return 0, err
	}
	// The committed results are the full default matrix, and only `make
	// proofs` (or this command with no flags, from the module root) writes
	// them. Any other run is a check, and goes elsewhere unless told.
	full := !set["designs"] && !set["families"] && !set["n"] && !set["seed"] && *storeFlag == ""
	if !set["out"] {
		*out = filepath.Join(os.TempDir(), "onceproof", "matrix")
		if sd != nil {
			*out += "-" + sd.Name()
		} else if full && atModuleRoot() {
			*out = "results"
		}
	}
	if err := prepareOut(*out); err != nil {
		return 0, err
	}

	// Progress on stderr, only for runs longer than a second: the wall
	// clock is read here, at the edge, never by the code under test.
	start := time.Now()
	var mu sync.Mutex
	var last time.Time
	opt.Progress = func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		if now.Sub(start) < time.Second || (now.Sub(last) < time.Second && done < total) {
			return
		}
		last = now
		if sd != nil {
			fmt.Fprintf(stderr, "matrix: %d/%d cells, %d runs on %s, %.1fs\n", done, total, sd.Runs()-1, sd.Name(), now.Sub(start).Seconds())
			return
		}
		fmt.Fprintf(stderr, "matrix: %d/%d cells, %.1fs\n", done, total, now.Sub(start).Seconds())
	}
	m := props.RunMatrix(opt)
	if ctx.Err() != nil {
		stop() // a second interrupt ends the process at once
		what := "nothing was written"
		if sd != nil {
			what = fmt.Sprintf("nothing was written, and the %d runs' stores on %s were removed", sd.Runs()-1, sp)
		}
		return 0, exitError{exitInterrupted, "interrupted: " + what}
	}
	if sd != nil {
		// A store that failed to open or clean up makes its runs' verdicts
		// meaningless (every call failed): report that, not the matrix.
		if err := sd.Err(); err != nil {
			return 0, fmt.Errorf("matrix: the store failed, no results written: %s", storeError(err, sp, *verbose))
		}
		if live := sd.Live(); live != 0 {
			return 0, fmt.Errorf("matrix: %d runs' stores were never closed (a harness bug)", live)
		}
		fmt.Fprintf(stdout, "%s: %d runs, each on a fresh store, in %.1fs\n", sd.Name(), sd.Runs()-1, time.Since(start).Seconds())
	}
	by := committedBy
	if *out != "results" || !full {
		by = commandLine(fs, set, sp)
	}
	if err := writeResults(*out, files(m, filepath.ToSlash(*out), by)); err != nil {
		return 0, err
	}
	if *jsonOut != "" {
		b, err := json.Marshal(m)
		if err != nil {
			return 0, err
		}
		if *jsonOut == "-" {
			if _, err := jsonW.Write(append(b, '\n')); err != nil {
				return 0, err
			}
		} else if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return 0, badf("matrix: -json %s: %v", *jsonOut, err)
		}
	}
	fmt.Fprintf(stdout, "wrote %s (%d designs x %d families, %d schedules per cell)\n",
		filepath.Join(*out, "matrix.md"), len(m.Rows), len(m.Families), m.N)
	ms := m.Mismatches()
	if len(ms) == 0 {
		return exitOK, nil
	}
	fmt.Fprintf(stdout, "%d cells disagree with their design's declaration:\n", len(ms))
	missed := 0
	for _, x := range ms {
		fmt.Fprintln(stdout, "  "+x.String())
		if len(x.Want) > 0 && len(x.Got) == 0 && x.Unknown == 0 {
			missed++
		}
	}
	if missed > 0 && m.N < props.DefaultMatrixN {
		fmt.Fprintf(stdout, "hint: %d of them are declared failures that did not show in %d schedules per cell; the declarations are derived for the default -n %d (rerun with -n %d or more)\n",
			missed, m.N, props.DefaultMatrixN, props.DefaultMatrixN)
	}
	return exitFailed, nil
}

// commandLine is the command that produced a non-default matrix, for its
// header: every flag given that changes what is written, store redacted.
func commandLine(fs *flag.FlagSet, set map[string]bool, sp storeSpec) string {
	parts := []string{"onceproof matrix"}
	fs.VisitAll(func(f *flag.Flag) {
		if !set[f.Name] || f.Name == "json" || f.Name == "v" || f.Name == "parallel" {
			return
		}
		v := f.Value.String()
		if f.Name == "store" {
			v = sp.String()
		}
		parts = append(parts, "-"+f.Name, shellQuote(v))
	})
	return strings.Join(parts, " ")
}

// shellQuote quotes v for a shell if it needs it.
func shellQuote(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\n'\"\\$`*?&;|<>()[]{}!#~") {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

func selectDesigns(all impls.Registry, list string) ([]faults.Design, error) {
	if list == "" {
		return all, nil
	}
	var out []faults.Design
	for _, name := range strings.Split(list, ",") {
		d, err := findDesign(all, strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// selectFamilies parses -families: each a family of faults.Families or
// several joined with '+' (late+crash), as faults.Gen accepts.
func selectFamilies(list string) ([]faults.Family, error) {
	if list == "" {
		return faults.Families, nil
	}
	var out []faults.Family
	for _, name := range strings.Split(list, ",") {
		f := faults.Family(strings.TrimSpace(name))
		if err := faults.CheckFamily(f); err != nil {
			return nil, badf("matrix: -families: %v", err)
		}
		out = append(out, f)
	}
	return out, nil
}

// silent is a go-redis logger that drops its lines.
type silent struct{}

func (silent) Printf(context.Context, string, ...any) {}
