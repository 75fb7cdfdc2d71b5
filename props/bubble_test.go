package props_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
)

// Every registered design reads only the now it is given, so a run inside
// a bubble (TestDesign's) makes the history a run outside one (the CLI
// matrix's) makes, event for event: the kit and the committed matrix judge
// the same runs. A design that read the wall clock, or left a goroutine
// behind, would differ here. A design whose runs differ outside a bubble
// too is held to the same verdicts instead.
func TestRegisteredDesignsRunTheSameInABubble(t *testing.T) {
	w := props.World
	// 1 seed a family: a schedule of each family reaches the code paths
	// of every design that depend on time (windows, leases, the drain's
	// Recover); more seeds repeat them at the cost of three runs each (one
	// in a bubble), which -race makes the package's slowest test.
	const seeds = 1
	for _, d := range impls.All() {
		for _, f := range w.Families {
			if _, _, exhaustive := w.Exhaustive(f); exhaustive {
				continue // small-scope enumerates what the sampled families generate
			}
			for seed := uint64(1); seed <= seeds; seed++ {
				s := w.Generate(f, seed)
				out := faults.Run(d, s, faults.RunOptions{})
				in := faults.History(engine.RunInBubble(t, w, d, s, faults.RunOptions{}))
				if reflect.DeepEqual(out.Events, in.Events) && out.Stalled == in.Stalled && out.Exhausted == in.Exhausted {
					continue
				}
				if again := faults.Run(d, s, faults.RunOptions{}); !reflect.DeepEqual(out.Events, again.Events) {
					// Not a pure function of the schedule outside a bubble
					// either (ristretto: its admission policy drops access
					// records as its goroutines are scheduled): the
					// verdicts are what must agree.
					if o, i := props.Judge(out).Failed(), props.Judge(in).Failed(); !reflect.DeepEqual(o, i) {
						t.Errorf("%s under %s, seed %d: the run in a bubble fails %v, the run outside one %v\nreproduce: go test ./props -run TestRegisteredDesignsRunTheSameInABubble", d.Name(), f, seed, i, o)
					}
					continue
				}
				i := 0
				for i < min(len(out.Events), len(in.Events)) && reflect.DeepEqual(out.Events[i], in.Events[i]) {
					i++
				}
				t.Errorf("%s under %s, seed %d: the run in a bubble differs from the run outside one at event %d of %d and %d (stalled %v, %v)\noutside: %s\ninside:  %s\nreproduce: go test ./props -run TestRegisteredDesignsRunTheSameInABubble",
					d.Name(), f, seed, i, len(out.Events), len(in.Events), out.Stalled, in.Stalled, eventAt(out, i), eventAt(in, i))
			}
		}
	}
}

// eventAt is event i of h, or "none".
func eventAt(h faults.History, i int) string {
	if i >= len(h.Events) {
		return "none"
	}
	return fmt.Sprintf("%+v", h.Events[i])
}
