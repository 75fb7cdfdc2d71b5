package engine_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// The hand-written schedules under testdata/toy/sched: each .sched names
// its design and the properties it fails (the hand-derived verdict, which
// the run must match), and its timeline and sequence diagram are the
// .golden beside it (go test -run TestToySchedFiles -update rewrites
// them). A "# toy: max-events=N" line sets the run's budget.

func designNamed(t *testing.T, name string) toyDesign {
	t.Helper()
	for _, d := range append(slices.Clone(toyDesigns), sloppy{}) {
		if d.Name() == name {
			return d
		}
	}
	t.Fatalf("no toy design %q", name)
	return nil
}

// toyRunOptions reads the "# toy:" line of a schedule file.
func toyRunOptions(t *testing.T, text string) engine.RunOptions {
	t.Helper()
	var o engine.RunOptions
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, "# toy: ")
		if !ok {
			continue
		}
		for _, kv := range strings.Fields(rest) {
			k, v, _ := strings.Cut(kv, "=")
			n, err := strconv.Atoi(v)
			if k != "max-events" || err != nil {
				t.Fatalf("bad toy option %q (want max-events=<int>)", kv)
			}
			o.MaxEvents = n
		}
	}
	return o
}

func TestToySchedFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "toy", "sched", "*.sched"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schedule files (%v)", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sched")
		t.Run(name, func(t *testing.T) {
			repro := "go test -run '^TestToySchedFiles$/^" + name + "$' ./engine"
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sf, err := engine.ParseSchedFile(toyWorld, string(text))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			d := designNamed(t, sf.Design)
			opt := toyRunOptions(t, string(text))
			h := toyWorld.Run(d, sf.Schedule, opt)
			r := toyWorld.Judge(h)
			if got := r.Failed(); !slices.Equal(got, sf.Fails) {
				t.Errorf("%s on %s fails [%s]; the file's header says [%s]\n%s\n(%s)", d.Name(), file, engine.JoinProps(got), engine.JoinProps(sf.Fails), engine.Timeline(toyWorld, h, r), repro)
			}
			if opt.MaxEvents > 0 && !h.Exhausted {
				t.Errorf("%s sets max-events=%d but the run drained within it (%s)", file, opt.MaxEvents, repro)
			}
			if again := toyWorld.Run(d, sf.Schedule, opt); !reflect.DeepEqual(again.Events, h.Events) {
				t.Errorf("two runs of %s differ: the runner is not deterministic (%s)", file, repro)
			}
			// The file's schedule prints and parses back to itself, with
			// its header.
			back, err := engine.ParseSchedFile(toyWorld, engine.FormatSchedFile(toyWorld, sf))
			if err != nil || !reflect.DeepEqual(back, sf) {
				t.Errorf("%s does not round-trip through FormatSchedFile and ParseSchedFile: %v\n%s (%s)", file, err, engine.FormatSchedFile(toyWorld, sf), repro)
			}
			checkGolden(t, filepath.Join("sched", name+".golden"), engine.Timeline(toyWorld, h, r)+"\n"+engine.Mermaid(toyWorld, h, r))
		})
	}
}
