package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/props"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

var update = flag.Bool("update", false, "rewrite ../../results/ from the code (same as make proofs)")

// moduleRoot is the module root, seen from this package: the committed
// results are under it.
var moduleRoot = filepath.Join("..", "..")

// mustHold are the designs that must hold every property in every family:
// the references and the two production shapes built on the settlement
// one.
var mustHold = map[string][]string{"settle": {"ref", "sharded", "ristretto"}, "loot": {"loot-ref"}}

// computed caches each subject's default matrix (a test binary computes
// each once).
var computed sync.Map // subject name -> *matrixOnce

type matrixOnce struct {
	once sync.Once
	m    any
	err  error
}

// defaultMatrix is the matrix `make proofs` computes for sub, computed
// once per test binary. Under the race detector it is computed by `go run`
// in a child process built without it: the matrix's runs are
// single-goroutine and deterministic, so the detector would only make them
// 5-10x slower without anything to find; the concurrent families' real
// goroutines run in-process in TestConcurrentFamilyOnRealGoroutines, where
// the detector matters.
func defaultMatrix[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X]) engine.Matrix[S, X] {
	t.Helper()
	v, _ := computed.LoadOrStore(sub.name, &matrixOnce{})
	mo := v.(*matrixOnce)
	mo.once.Do(func() {
		if !raceEnabled {
			mo.m = engine.RunMatrix(sub.world, engine.MatrixOptions[D]{Designs: sub.designs})
			return
		}
		dir := t.TempDir()
		js := filepath.Join(dir, "matrix.json")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		cmd := exec.Command(goTool, "run", ".", "matrix", "-subject", sub.name, "-out", dir, "-json", js)
		out, err := cmd.CombinedOutput()
		if _, statErr := os.Stat(js); statErr != nil {
			mo.err = fmt.Errorf("go run . matrix -subject %s: %v\n%s", sub.name, err, out)
			return
		}
		var m engine.Matrix[S, X]
		b, err := os.ReadFile(js)
		if err == nil {
			err = json.Unmarshal(b, &m)
		}
		mo.m, mo.err = m, err
	})
	if mo.err != nil {
		t.Fatal(mo.err)
	}
	return mo.m.(engine.Matrix[S, X])
}

const regen = "regenerate with `make proofs` or `go test ./cmd/onceproof -run TestCommittedResultsAreCurrent -update`, and review the diff"

// TestCommittedResultsAreCurrent fails when results/ (settlements) or
// results/loot/ differs from what the code produces.
func TestCommittedResultsAreCurrent(t *testing.T) {
	reg := registry()
	t.Run("subject=settle", func(t *testing.T) { checkCommitted(t, settleSubject(reg.settle)) })
	t.Run("subject=loot", func(t *testing.T) { checkCommitted(t, lootSubject(reg.loot)) })
}

func checkCommitted[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X]) {
	dir := filepath.Join(moduleRoot, filepath.FromSlash(sub.results))
	files := files(sub, defaultMatrix(t, sub), sub.results, committedBy)
	if *update {
		if err := writeResults(dir, files); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", dir)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil || string(manifest) != manifestText(files) {
		t.Errorf("%s/%s is stale or missing (%v); %s", sub.results, manifestName, err, regen)
	}
	var onDisk []string
	entries, err := os.ReadDir(filepath.Join(dir, "counterexamples"))
	if err != nil {
		t.Fatalf("reading the committed results: %v; %s", err, regen)
	}
	for _, e := range entries {
		onDisk = append(onDisk, "counterexamples/"+e.Name())
	}
	var want []string
	for name := range files {
		if strings.HasPrefix(name, "counterexamples/") {
			want = append(want, name)
		}
	}
	sort.Strings(want)
	if diff := cmp.Diff(want, onDisk); diff != "" {
		t.Errorf("%s/counterexamples/ has other files than the code produces (-code +committed):\n%s%s", sub.results, diff, regen)
	}
	for name, text := range files {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("%s/%s: %v; %s", sub.results, name, err, regen)
			continue
		}
		if diff := cmp.Diff(strings.Split(text, "\n"), strings.Split(string(got), "\n")); diff != "" {
			t.Errorf("%s/%s is stale (-code +committed):\n%s%s", sub.results, name, diff, regen)
		}
	}
}

// TestMatrixAgreesWithEveryDeclaration fails on a cell that differs from
// its design's declaration, and on a reference that fails anything or
// declares a failure.
func TestMatrixAgreesWithEveryDeclaration(t *testing.T) {
	reg := registry()
	t.Run("subject=settle", func(t *testing.T) { checkDeclarations(t, settleSubject(reg.settle)) })
	t.Run("subject=loot", func(t *testing.T) { checkDeclarations(t, lootSubject(reg.loot)) })
}

func checkDeclarations[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X]) {
	m := defaultMatrix(t, sub)
	for _, x := range m.Mismatches() {
		t.Errorf("%s (see %s/matrix.md; replay: go run ./cmd/onceproof replay %s/counterexamples/%s--%s.sched)", x, sub.results, sub.results, x.Design, x.Family)
	}
	for _, name := range mustHold[sub.name] {
		row, ok := m.Row(name)
		if !ok {
			t.Errorf("design %s is not registered", name)
			continue
		}
		for _, e := range row.Declaration.Fails {
			t.Errorf("%s declares it fails %v under %v; it must hold everywhere", name, e.Props, e.Families)
		}
		for _, c := range row.Cells {
			if !c.Holds() {
				t.Errorf("%s under %s: %s; it must hold everywhere (go run ./cmd/onceproof replay %s/counterexamples/%s--%s.sched)", name, c.Family, c.Text(), sub.results, name, c.Family)
			}
		}
	}
}

// TestCommittedCounterexamplesStillFail replays every committed
// counterexample against the design its header names: it must fail exactly
// the properties its header records.
func TestCommittedCounterexamplesStillFail(t *testing.T) {
	reg := registry()
	t.Run("subject=settle", func(t *testing.T) { checkCounterexamples(t, settleSubject(reg.settle)) })
	t.Run("subject=loot", func(t *testing.T) { checkCounterexamples(t, lootSubject(reg.loot)) })
}

func checkCounterexamples[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X]) {
	eachCounterexample(t, sub, func(t *testing.T, file string, sf engine.SchedFile[S], d D) {
		r := sub.world.Judge(sub.world.Run(d, sf.Schedule, engine.RunOptions{}))
		if diff := cmp.Diff(sf.Fails, r.Failed()); diff != "" || len(sf.Fails) == 0 {
			t.Errorf("%s no longer fails as recorded (-recorded +now):\n%s\nreplay: go run ./cmd/onceproof replay %s/counterexamples/%s", file, diff, sub.results, filepath.Base(file))
		}
	})
}

// TestConcurrentFamilyOnRealGoroutines runs the concurrent family on
// free-running goroutines (faults.RunOptions.Free, under -race in `make
// test`): the committed matrix interleaves them deterministically, at the
// scheduler's points only, and cannot see a race inside a design's memory. A failure it shows is real
// (no false positives) and fails the test unless the design declares it; a
// declared one that does not show is only logged, since real interleavings
// may miss it.
func TestConcurrentFamilyOnRealGoroutines(t *testing.T) {
	// 40 schedules per design: about 15 designs x 40 runs of 10..60
	// deliveries stay around a second under -race on 2 cores.
	const n = 40
	for _, d := range registry().settle {
		t.Run("design="+d.Name(), func(t *testing.T) {
			declared := engine.DeclarationOf(d).Expected(faults.Families.Concurrent, faults.World.Properties)
			shown := map[faults.Property]bool{}
			for k := range n {
				seed := props.DefaultMatrixSeed + uint64(k)
				s := faults.World.Generate(faults.Families.Concurrent, seed)
				r := props.Judge(faults.Run(d, s, faults.RunOptions{Free: true}))
				for _, v := range r {
					if v.Outcome != props.Fails {
						continue
					}
					shown[v.Property] = true
					if !slices.Contains(declared, v.Property) {
						t.Errorf("%s fails %s on real goroutines, undeclared (schedule seed %d; a race may not replay every time); "+
							"fix the design or declare it under faults.Concurrent in its Declaration:\n%v\n%s",
							d.Name(), v.Property, seed, v, faults.World.Format(s))
						return
					}
				}
			}
			for _, p := range declared {
				if !shown[p] {
					t.Logf("%s declares %s fails under concurrent; %d real-goroutine runs did not show it", d.Name(), p, n)
				}
			}
		})
	}
}

// TestLootConcurrencyOnRealGoroutines runs the loot families that put
// requests on several nodes at one instant (ties, concurrent-settle,
// cancel-race, and duplicate-claim's 20 identical claims) on free-running
// goroutines, under -race in `make test`: a design's data race shows here,
// where the committed matrix interleaves at env calls and answers only. A failure the
// design does not declare for the family fails the test; a declared one
// that does not show is logged (real interleavings may miss it).
func TestLootConcurrencyOnRealGoroutines(t *testing.T) {
	// 10 schedules per family and design: 13 designs x 4 families x 10
	// runs of a few dozen requests stay within seconds under -race.
	const n = 10
	fams := []engine.Family{lootfaults.Families.Ties, lootfaults.Families.ConcurrentSettle, lootfaults.Families.CancelRace, lootfaults.Families.DuplicateClaim}
	for _, d := range registry().loot {
		t.Run("design="+d.Name(), func(t *testing.T) {
			decl := engine.DeclarationOf(d)
			for _, f := range fams {
				declared := decl.Expected(f, lootfaults.World.Properties)
				for k := range n {
					s := lootfaults.World.Generate(f, props.DefaultMatrixSeed+uint64(k))
					r := lootprops.Judge(lootfaults.Run(d, s, engine.RunOptions{Free: true}))
					for _, p := range r.Failed() {
						if !slices.Contains(declared, p) {
							v, _ := r.Verdict(p)
							t.Errorf("%s fails %s under %s on real goroutines, undeclared (a race may not replay every time):\n%v\n%s", d.Name(), p, f, v, lootfaults.World.Format(s))
							return
						}
					}
				}
			}
		})
	}
}
