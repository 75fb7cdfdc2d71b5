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
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

var update = flag.Bool("update", false, "rewrite ../../results/ from the code (same as make proofs)")

// resultsDir is results/ at the module root, seen from this package.
var resultsDir = filepath.Join("..", "..", "results")

// mustHold are the designs that must hold every property in every family:
// the reference and the two production shapes built on it.
var mustHold = []string{"ref", "sharded", "ristretto"}

var (
	matrixOnce sync.Once
	matrix     props.Matrix
	matrixErr  error
)

// defaultMatrix is the matrix `make proofs` computes, computed once per test
// binary. Under the race detector it is computed by `go run` in a child
// process built without it: the matrix's runs are single-goroutine and
// deterministic, so the detector would only make them 5-10x slower (a minute
// on 2 cores) without anything to find; the concurrent family's real
// goroutines run in-process below, where the detector matters.
func defaultMatrix(t *testing.T) props.Matrix {
	t.Helper()
	matrixOnce.Do(func() {
		if !raceEnabled {
			matrix = props.RunMatrix(props.MatrixOptions{Designs: registry()})
			return
		}
		dir := t.TempDir()
		js := filepath.Join(dir, "matrix.json")
		goTool, err := exec.LookPath("go")
		if err != nil {
			goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		cmd := exec.Command(goTool, "run", ".", "matrix", "-out", dir, "-json", js)
		out, err := cmd.CombinedOutput()
		if _, statErr := os.Stat(js); statErr != nil {
			matrixErr = fmt.Errorf("go run . matrix: %v\n%s", err, out)
			return
		}
		b, err := os.ReadFile(js)
		if err == nil {
			err = json.Unmarshal(b, &matrix)
		}
		matrixErr = err
	})
	if matrixErr != nil {
		t.Fatal(matrixErr)
	}
	return matrix
}

const regen = "regenerate with `make proofs` or `go test ./cmd/onceproof -run TestCommittedResultsAreCurrent -update`, and review the diff"

func TestCommittedResultsAreCurrent(t *testing.T) {
	files := files(defaultMatrix(t), "results", committedBy)
	if *update {
		if err := writeResults(resultsDir, files); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", resultsDir)
	}
	manifest, err := os.ReadFile(filepath.Join(resultsDir, manifestName))
	if err != nil || string(manifest) != manifestText(files) {
		t.Errorf("results/%s is stale or missing (%v); %s", manifestName, err, regen)
	}
	var onDisk []string
	entries, err := os.ReadDir(filepath.Join(resultsDir, "counterexamples"))
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
		t.Errorf("results/counterexamples/ has other files than the code produces (-code +committed):\n%s%s", diff, regen)
	}
	for name, text := range files {
		got, err := os.ReadFile(filepath.Join(resultsDir, filepath.FromSlash(name)))
		if err != nil {
			t.Errorf("results/%s: %v; %s", name, err, regen)
			continue
		}
		if diff := cmp.Diff(strings.Split(text, "\n"), strings.Split(string(got), "\n")); diff != "" {
			t.Errorf("results/%s is stale (-code +committed):\n%s%s", name, diff, regen)
		}
	}
}

func TestMatrixAgreesWithEveryDeclaration(t *testing.T) {
	m := defaultMatrix(t)
	for _, x := range m.Mismatches() {
		t.Errorf("%s (see results/matrix.md; replay: go run ./cmd/onceproof replay results/counterexamples/%s--%s.sched)", x, x.Design, x.Family)
	}
	for _, name := range mustHold {
		row, ok := m.Row(name)
		if !ok {
			t.Errorf("design %s is not registered in impls.All", name)
			continue
		}
		for _, e := range row.Declaration.Fails {
			t.Errorf("%s declares it fails %v under %v; it must hold everywhere", name, e.Props, e.Families)
		}
		for _, c := range row.Cells {
			if !c.Holds() {
				t.Errorf("%s under %s: %s; it must hold everywhere (go run ./cmd/onceproof replay results/counterexamples/%s--%s.sched)", name, c.Family, c.Text(), name, c.Family)
			}
		}
	}
}

// TestCommittedCounterexamplesStillFail replays every committed
// counterexample against the design its header names: it must fail exactly
// the properties its header records.
func TestCommittedCounterexamplesStillFail(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(resultsDir, "counterexamples", "*.sched"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no committed counterexamples under %s; %s", resultsDir, regen)
	}
	designs := registry()
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sf, err := props.ParseSchedFile(string(text))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			d, err := findDesign(designs, sf.Design)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			r := props.Judge(faults.Run(d, sf.Schedule, faults.RunOptions{}))
			if diff := cmp.Diff(sf.Fails, r.Failed()); diff != "" || len(sf.Fails) == 0 {
				t.Errorf("%s no longer fails as recorded (-recorded +now):\n%s\nreplay: go run ./cmd/onceproof replay results/counterexamples/%s", file, diff, filepath.Base(file))
			}
		})
	}
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
	for _, d := range registry() {
		t.Run("design="+d.Name(), func(t *testing.T) {
			declared := faults.DeclarationOf(d).Expected(faults.Concurrent, faults.Properties)
			shown := map[faults.Property]bool{}
			for k := range n {
				seed := props.DefaultMatrixSeed + uint64(k)
				s := faults.Generate(faults.Concurrent, seed)
				r := props.Judge(faults.Run(d, s, faults.RunOptions{Free: true}))
				for _, v := range r {
					if v.Outcome != props.Fails {
						continue
					}
					shown[v.Property] = true
					if !slices.Contains(declared, v.Property) {
						t.Errorf("%s fails %s on real goroutines, undeclared (schedule seed %d; a race may not replay every time); "+
							"fix the design or declare it under faults.Concurrent in its Declaration:\n%v\n%s",
							d.Name(), v.Property, seed, v, faults.Format(s))
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
