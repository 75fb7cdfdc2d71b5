package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/props"
)

// matrixCmd is `matrix`.
func matrixCmd(args []string, designs []faults.Design, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	dflag := fs.String("designs", "", "comma-separated designs (default: all)")
	fflag := fs.String("families", "", "comma-separated families (default: all)")
	n := fs.Int("n", props.DefaultMatrixN, "schedules per cell")
	seed := fs.Uint64("seed", props.DefaultMatrixSeed, "first generator seed of every cell")
	parallel := fs.Int("parallel", 0, "cells run at once (default: GOMAXPROCS)")
	out := fs.String("out", "results", "directory for matrix.md and counterexamples/ (with -store: a temporary directory, printed)")
	storeFlag := fs.String("store", "", "run the ref design on a real store, a fresh one per run: "+storeForms+
		"; only the ref row takes a store; default -n "+fmt.Sprint(DefaultStoreN))
	jsonOut := fs.String("json", "", "also write the matrix as JSON to this file (the tests read it)")
	pos, err := parse(fs, args)
	if err != nil {
		return 0, err
	}
	if len(pos) > 0 {
		return 0, badf("matrix takes no arguments, got %q; %s", pos, usageSuffix)
	}
	if *n < 1 || *seed == 0 || *parallel < 0 {
		return 0, badf("matrix: -n must be >= 1, -seed != 0 and -parallel >= 0 (got %d, %d, %d)", *n, *seed, *parallel)
	}
	opt := props.MatrixOptions{N: *n, Seed: *seed, Parallel: *parallel}
	if opt.Families, err = selectFamilies(*fflag); err != nil {
		return 0, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var sd *refdesign.StoreDesign
	var storeLabel string
	if *storeFlag != "" {
		var done func() error
		if sd, storeLabel, done, err = storeDesign(*storeFlag, *dflag); err != nil {
			return 0, err
		}
		defer done()
		opt.Designs = []faults.Design{sd}
		if !set["n"] {
			opt.N = DefaultStoreN
		}
		if !set["out"] {
			// Not results/: that is the committed MemStore matrix, and a
			// real store's run is a check of that store, not a new result.
			*out = filepath.Join(os.TempDir(), "onceproof", "matrix-"+sd.Name())
		}
	} else if opt.Designs, err = selectDesigns(designs, *dflag); err != nil {
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
	if sd != nil {
		// A store that failed to open or clean up makes its runs' verdicts
		// meaningless (every call failed): report that, not the matrix.
		if err := sd.Err(); err != nil {
			return 0, fmt.Errorf("matrix: the store failed, no results written:\n%w", err)
		}
		if live := sd.Live(); live != 0 {
			return 0, fmt.Errorf("matrix: %d runs' stores were never closed (a harness bug)", live)
		}
		fmt.Fprintf(stdout, "%s: %d runs, each on a fresh store, in %.1fs\n", sd.Name(), sd.Runs()-1, time.Since(start).Seconds())
		m.Generated = fmt.Sprintf("onceproof matrix -store %s -families %s -n %d -seed %d", storeLabel, strings.Join(familyStrings(m.Families), ","), m.N, m.Seed)
	}
	if err := writeResults(*out, m.Files(filepath.ToSlash(*out))); err != nil {
		return 0, err
	}
	if *jsonOut != "" {
		b, err := json.Marshal(m)
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return 0, err
		}
	}
	fmt.Fprintf(stdout, "wrote %s (%d designs x %d families, %d schedules per cell)\n",
		filepath.Join(*out, "matrix.md"), len(m.Rows), len(m.Families), m.N)
	if ms := m.Mismatches(); len(ms) > 0 {
		fmt.Fprintf(stdout, "%d cells disagree with their design's declaration:\n", len(ms))
		for _, x := range ms {
			fmt.Fprintln(stdout, "  "+x.String())
		}
		return exitFailed, nil
	}
	return exitOK, nil
}

func selectDesigns(all []faults.Design, list string) ([]faults.Design, error) {
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

func selectFamilies(list string) ([]faults.Family, error) {
	if list == "" {
		return faults.Families, nil
	}
	var out []faults.Family
	for _, name := range strings.Split(list, ",") {
		f := faults.Family(strings.TrimSpace(name))
		if !slices.Contains(faults.Families, f) {
			return nil, badf("unknown family %q (valid families: %s)", f, familyNames())
		}
		out = append(out, f)
	}
	return out, nil
}

// writeResults writes files under dir and removes the counterexamples a
// previous run left that this one did not produce, so matrix.md and
// counterexamples/ always agree.
func writeResults(dir string, files map[string]string) error {
	cx := filepath.Join(dir, "counterexamples")
	if err := os.MkdirAll(cx, 0o755); err != nil {
		return err
	}
	old, err := os.ReadDir(cx)
	if err != nil {
		return err
	}
	for _, e := range old {
		rel := "counterexamples/" + e.Name()
		if _, keep := files[rel]; !keep && (strings.HasSuffix(e.Name(), ".sched") || strings.HasSuffix(e.Name(), ".md")) {
			if err := os.Remove(filepath.Join(cx, e.Name())); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(files[name]), 0o644); err != nil {
			return fmt.Errorf("writing results: %w", err)
		}
	}
	return nil
}

// storeDesign builds the ref row on -store's store and checks that the
// store answers (one probe run, opened and cleaned up) before the matrix
// starts. -designs may only name ref.
func storeDesign(store, list string) (*refdesign.StoreDesign, string, func() error, error) {
	sp, err := parseStore(store)
	if err != nil {
		return nil, "", nil, err
	}
	for _, name := range strings.Split(list, ",") {
		if name = strings.TrimSpace(name); name != "" && name != refdesign.Name && name != refdesign.Name+"@"+sp.kind {
			return nil, "", nil, badf("matrix: -store runs only the %s design (the other rows keep their durable state in their own in-memory stores), got -designs %q", refdesign.Name, list)
		}
	}
	tag, err := runTag()
	if err != nil {
		return nil, "", nil, err
	}
	sd, done, err := sp.design(tag)
	if err != nil {
		return nil, "", nil, err
	}
	c := sd.NewCluster().(faults.ClusterCloser)
	c.Close()
	if err := sd.Err(); err != nil {
		done()
		return nil, "", nil, fmt.Errorf("matrix: cannot use -store %s:\n%w", sp, err)
	}
	return sd, sp.String(), done, nil
}

func familyStrings(fs []faults.Family) []string {
	s := make([]string, len(fs))
	for i, f := range fs {
		s[i] = string(f)
	}
	return s
}
