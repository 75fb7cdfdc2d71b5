package impls_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
)

// header is the schedule text every hand-built case starts with: one node,
// the generators' retry and attempt budget.
const header = `family clean
nodes 1
retry 250ms
max-attempts 16
concurrent false
`

// mutantCases are the smallest schedules where four-sig holds every
// property and one mutant breaks the property its rule exists for. The
// matrix cannot show these differences: four-sig's own signature
// collisions (a re-entered room restarts its rounds) already fail NoLoss in
// every generated family, so the mutants' cells look alike. These runs pin
// each rule separately.
var mutantCases = []struct {
	mutant string
	fails  faults.Property
	why    string
	sched  string
}{
	{
		mutant: "four-sig-cap3",
		fails:  faults.Properties.NoDup,
		why:    "the 4th signature (B's final) evicts A's instant; a copy of it inside the two-match span is credited again",
		sched: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=20 final=true seq=2
settle s2 player=1 room=1 match=2 round=2 kind=instant net=10 final=false seq=3
settle s3 player=1 room=1 match=2 round=2 kind=final net=20 final=true seq=4
deliver at=250ms s0 node=0
deliver at=500ms s1 node=0
deliver at=1.25s s2 node=0
deliver at=1.5s s3 node=0
deliver at=1.75s s0 node=0
`,
	},
	{
		mutant: "four-sig-clear-on-full",
		fails:  faults.Properties.NoDup,
		why:    "C's instant finds the window full and clears it; a copy of B's instant is then credited again",
		sched: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=20 final=true seq=2
settle s2 player=1 room=1 match=2 round=2 kind=instant net=10 final=false seq=3
settle s3 player=1 room=1 match=2 round=2 kind=final net=20 final=true seq=4
settle s4 player=1 room=1 match=3 round=3 kind=instant net=10 final=false seq=5
deliver at=250ms s0 node=0
deliver at=500ms s1 node=0
deliver at=1.25s s2 node=0
deliver at=1.5s s3 node=0
deliver at=2.25s s4 node=0
deliver at=2.5s s2 node=0
`,
	},
	{
		mutant: "four-sig-no-room",
		fails:  faults.Properties.NoLoss,
		why:    "the player moved to room 2, whose round 1 pays what room 1's round 1 paid: one signature without the room",
		sched: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=2
deliver at=250ms s0 node=0
deliver at=1.25s s1 node=0
`,
	},
	{
		mutant: "four-sig-no-net",
		fails:  faults.Properties.NoLoss,
		why:    "the match's third settlement is not final, like its instant: one signature without the amount",
		sched: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=third net=-20 final=false seq=2
deliver at=250ms s0 node=0
deliver at=625ms s1 node=0
`,
	},
	{
		mutant: "four-sig-no-final",
		fails:  faults.Properties.NoLoss,
		why:    "the match's final pays what its instant paid: one signature without the final flag",
		sched: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=2
deliver at=250ms s0 node=0
deliver at=500ms s1 node=0
`,
	},
	{
		mutant: "credit-current-room",
		fails:  faults.Properties.NoCrossRoom,
		why:    "room 1's final arrives after the player's instant in room 2: credited to room 2",
		sched: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=-20 final=true seq=2
settle s2 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=3
deliver at=250ms s0 node=0
deliver at=1.25s s2 node=0
deliver at=1.5s s1 node=0
`,
	},
}

func parse(t *testing.T, body string) faults.Schedule {
	t.Helper()
	s, err := faults.World.Parse(header + strings.TrimLeft(body, "\n"))
	if err != nil {
		t.Fatalf("schedule does not parse: %v", err)
	}
	return s
}

func mustDesign(t *testing.T, name string) faults.Design {
	t.Helper()
	d, ok := impls.All().ByName(name)
	if !ok {
		t.Fatalf("no design %q (have %v)", name, impls.All().Names())
	}
	return d
}

// TestEachMutantBreaksItsRule runs each mutant and four-sig on the case
// that isolates the mutant's rule: four-sig holds everything, the mutant
// fails exactly the property the rule protects.
func TestEachMutantBreaksItsRule(t *testing.T) {
	for _, tc := range mutantCases {
		t.Run(tc.mutant, func(t *testing.T) {
			s := parse(t, tc.sched)
			repro := fmt.Sprintf("go test ./impls/ -run 'TestEachMutantBreaksItsRule/%s$' -v", tc.mutant)
			base := props.Judge(faults.Run(mustDesign(t, "four-sig"), s, faults.RunOptions{}))
			if f := base.Failed(); len(f) > 0 {
				t.Errorf("four-sig fails %v on the case meant to isolate %s (to reproduce: %s)\n%s", f, tc.mutant, repro, base)
			}
			h := faults.Run(mustDesign(t, tc.mutant), s, faults.RunOptions{})
			got := props.Judge(h)
			if !slices.Contains(got.Failed(), tc.fails) {
				t.Errorf("%s holds %v here, want it to fail: %s (to reproduce: %s)\n%s", tc.mutant, tc.fails, tc.why, repro, props.Timeline(h, got))
			}
		})
	}
}

// TestFourSigConfusesAReenteredRoom pins four-sig's own failure, the one
// that fills its matrix row: matches in rooms 1, 2, 1 restart the round at 1,
// so the third match's instant has the first match's signature, inside the
// window, and is dropped although it was never credited.
func TestFourSigConfusesAReenteredRoom(t *testing.T) {
	s := parse(t, `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=20 final=true seq=2
settle s2 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=3
settle s3 player=1 room=2 match=2 round=1 kind=final net=20 final=true seq=4
settle s4 player=1 room=1 match=3 round=1 kind=instant net=10 final=false seq=5
deliver at=250ms s0 node=0
deliver at=500ms s1 node=0
deliver at=1.25s s2 node=0
deliver at=1.5s s3 node=0
deliver at=2.25s s4 node=0
`)
	h := faults.Run(mustDesign(t, "four-sig"), s, faults.RunOptions{})
	r := props.Judge(h)
	if want := []faults.Property{faults.Properties.NoLoss, faults.Properties.HonestAck}; !slices.Equal(r.Failed(), want) {
		t.Fatalf("four-sig fails %v, want %v (to reproduce: go test ./impls/ -run TestFourSigConfusesAReenteredRoom -v)\n%s", r.Failed(), want, props.Timeline(h, r))
	}
	// The reference, keyed by identity, holds on the same schedule.
	if f := props.Judge(faults.Run(mustDesign(t, "ref"), s, faults.RunOptions{})).Failed(); len(f) > 0 {
		t.Fatalf("ref fails %v on the re-entered room (to reproduce: go test ./impls/ -run TestFourSigConfusesAReenteredRoom -v)", f)
	}
}
