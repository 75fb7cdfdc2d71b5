package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// TestCommittedCounterexamplesAreOneMinimal replays, for every committed
// counterexample, each schedule that is it less one settlement or request
// (the world made whole by its Drops), one delivery or one fault
// (engine.Removals): none may still fail the property the file was shrunk
// toward. A candidate the world's rules reject is not listed, so it does
// not count. A file that fails lists every item that can go and the
// command that replays it.
func TestCommittedCounterexamplesAreOneMinimal(t *testing.T) {
	reg := registry()
	t.Run("subject=settle", func(t *testing.T) { checkOneMinimal(t, settleSubject(reg.settle)) })
	t.Run("subject=loot", func(t *testing.T) { checkOneMinimal(t, lootSubject(reg.loot)) })
}

func checkOneMinimal[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X]) {
	eachCounterexample(t, sub, func(t *testing.T, file string, sf engine.SchedFile[S], d D) {
		target, ok := shrunkToward(sub.world, filepath.Base(file), sf.Fails)
		if !ok {
			t.Fatalf("%s: its header records no failing property; %s", file, regen)
		}
		var removable []string
		for _, c := range engine.Removals(sub.world, sf.Schedule) {
			if sub.world.Judge(sub.world.Run(d, c.Schedule, engine.RunOptions{})).Outcome(target) == engine.Fails {
				removable = append(removable, c.What)
			}
		}
		if len(removable) > 0 {
			t.Errorf("%s is not 1-minimal: it still fails %s without any one of these %d: %s\nreplay: go run ./cmd/onceproof replay %s/counterexamples/%s -design %s",
				file, target, len(removable), strings.Join(removable, "; "), sub.results, filepath.Base(file), sf.Design)
		}
	})
}

// eachCounterexample runs check, as a subtest named by its file, on every
// committed counterexample of sub: its file, what the file says, and the
// design its header names.
func eachCounterexample[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X], check func(t *testing.T, file string, sf engine.SchedFile[S], d D)) {
	files, err := filepath.Glob(filepath.Join(moduleRoot, filepath.FromSlash(sub.results), "counterexamples", "*.sched"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no committed counterexamples under %s; %s", sub.results, regen)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			text, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			sf, err := engine.ParseSchedFile(sub.world, string(text))
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			d, err := sub.find(sf.Design)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			check(t, file, sf, d)
		})
	}
}

// shrunkToward is the property the matrix shrank a counterexample file
// toward: the one its name ends in (<design>--<family>--<property>.sched),
// else the first it fails (the cell's first failing property, in report
// order, names the file <design>--<family>.sched).
func shrunkToward[D engine.Design, S, X any](w engine.World[D, S, X], name string, fails []engine.Property) (engine.Property, bool) {
	parts := strings.Split(strings.TrimSuffix(name, ".sched"), "--")
	if p := engine.Property(parts[len(parts)-1]); len(parts) > 2 && slices.Contains(w.Properties, p) {
		return p, true
	}
	if len(fails) == 0 {
		return "", false
	}
	return fails[0], true
}
