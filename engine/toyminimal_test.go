package engine_test

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// Shrink ends 1-minimal: on every failing toy schedule of the first seeds
// of each generated family, no single removal (engine.Removals) of what
// it returns still fails the property it shrank toward.
func TestToyShrinkEndsOneMinimal(t *testing.T) {
	// 40 seeds per cell: 7 designs x 7 families x 40 is 1960 schedules of
	// a few dozen deliveries, under a second with their shrinks. Fewer
	// (5) miss what it is for: without Shrink's final removal loop the
	// first failures come at seed 6 (unkeyed under crash, a fault's
	// attempt past a dropped increment).
	const seeds = 40
	checked := 0
	for _, d := range toyDesigns {
		for _, f := range toyFamilies {
			if f == famSmall { // an enumeration, not generated
				continue
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				s := toyGenerate(f, seed)
				failed := toyJudge(toyRun(d, s, engine.RunOptions{})).Failed()
				if len(failed) == 0 {
					continue
				}
				p := failed[0]
				got := engine.Shrink(toyWorld, s, failsOn(d, p, nil), 0)
				checked++
				for _, c := range engine.Removals(toyWorld, got) {
					if failsOn(d, p, nil)(c.Schedule) {
						t.Errorf("%s under %s seed %d: the shrunk schedule still fails %s without %s:\n%s(go test -run '^TestToyShrinkEndsOneMinimal$' ./engine)",
							d.Name(), f, seed, p, c.What, toyFormat(got))
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no toy schedule of the first %d seeds failed: the test checked nothing (go test -run '^TestToyShrinkEndsOneMinimal$' ./engine)", seeds)
	}
	t.Logf("%d shrunk counterexamples checked", checked)
}
