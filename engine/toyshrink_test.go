package engine_test

import (
	"reflect"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// failsOn is the shrinker's predicate: d's run of s fails p.
func failsOn(d toyDesign, p engine.Property, calls *int) func(toySched) bool {
	return func(s toySched) bool {
		if calls != nil {
			*calls++
		}
		return toyJudge(toyRun(d, s, engine.RunOptions{})).Outcome(p) == engine.Fails
	}
}

func mustParse(t *testing.T, text string) toySched {
	t.Helper()
	s, err := toyParse(text)
	if err != nil {
		t.Fatalf("%v in\n%s", err, text)
	}
	return s
}

// Each case starts from a failing schedule much larger than its failure
// and names the minimal one, derived by hand in its comment.
func TestToyShrinkReachesTheMinimalCounterexample(t *testing.T) {
	for _, c := range []struct {
		name  string
		d     toyDesign
		p     engine.Property
		start func() toySched
		want  string
	}{{
		// forgetful forgets after windowSize (2) others: the smallest
		// failure is three increments and a copy of the first, on one node,
		// at one instant. The long family's first schedule is 10
		// increments and 20 deliveries on up to 2 nodes.
		name: "forgetful-long", d: forgetful{}, p: noDup,
		start: func() toySched { return toyGenerate(famLong, 1) },
		want: toyHeader(famLong, 1) + `inc i0 amount=7
inc i1 amount=8
inc i2 amount=9
deliver at=0s i0 node=0
deliver at=0s i1 node=0
deliver at=0s i2 node=0
deliver at=0s i0 node=0
`,
	}, {
		// The pause must outlast the resend at RetryAfter (250ms; a send
		// due when a pause ends goes first). Halving 1h keeps 1h/2^13 =
		// 439.453125ms (1h/2^14 is 219.7ms, short of it). One node is
		// enough: the resend goes to the paused node, which takes calls
		// while one is paused. The other increment (and its attempt, with
		// the fault moved down) goes.
		name: "forgetful-pause", d: forgetful{}, p: honestAck,
		start: func() toySched {
			return mustParse(t, toyHeader(famPause, 2)+`inc i0 amount=1
inc i1 amount=2
deliver at=0s i1 node=1
deliver at=3s i0 node=0
fault attempt=1 effect=1 pause for=1h
`)
		},
		want: toyHeader(famPause, 1) + `inc i0 amount=1
deliver at=0s i0 node=0
fault attempt=0 effect=1 pause for=439.453125ms
`,
	}, {
		// Both checks before either apply: choice 0 = 1 starts node 1's
		// goroutine (its arrival), choice 1 = 1 keeps it for its check,
		// and then node 0 runs to its end (choices past the end are 0)
		// with node 1's apply still to come. "1" alone hands over after
		// node 1's arrival and node 0 applies before node 1 checks, and
		// "0 1" lets node 0 check and apply first: both hold.
		name: "racy-switches", d: racy{}, p: noDup,
		start: func() toySched {
			return mustParse(t, pair+"switches 0 1 0 1 1 1 1 1\ninc i1 amount=2\ndeliver at=1s i1 node=0\n")
		},
		want: pair + "switches 1 1\n",
	}, {
		// Choices count modulo the runnable goroutines (2): 3 and 5 are
		// the 1 and 1 above, and dropping either holds, so only lowering
		// each to its smallest failing value reaches them.
		name: "racy-lowered", d: racy{}, p: noDup,
		start: func() toySched {
			return mustParse(t, pair+"switches 3 5\n")
		},
		want: pair + "switches 1 1\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			repro := "go test -run '^TestToyShrinkReachesTheMinimalCounterexample$/^" + c.name + "$' ./engine"
			s := c.start()
			if !failsOn(c.d, c.p, nil)(s) {
				t.Fatalf("the start does not fail %s (%s)", c.p, repro)
			}
			calls := 0
			got := engine.Shrink(toyWorld, s, failsOn(c.d, c.p, &calls), 0)
			want := mustParse(t, c.want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("shrunk to\n%s\nwant\n%s\n(%s)", toyFormat(got), toyFormat(want), repro)
			}
			if calls > engine.DefaultShrinkBudget {
				t.Errorf("Shrink ran %d candidates, over its budget of %d (%s)", calls, engine.DefaultShrinkBudget, repro)
			}
			if again := engine.Shrink(toyWorld, s, failsOn(c.d, c.p, nil), 0); !reflect.DeepEqual(again, got) {
				t.Errorf("a second Shrink of the same schedule gave\n%s\n(%s)", toyFormat(again), repro)
			}
		})
	}
}

// A budget of n candidates is n runs of the predicate at most, and what
// it returns still fails.
func TestToyShrinkStopsAtItsBudget(t *testing.T) {
	s := toyGenerate(famLong, 1)
	for _, budget := range []int{1, 5, 40} {
		calls := 0
		got := engine.Shrink(toyWorld, s, failsOn(forgetful{}, noDup, &calls), budget)
		if calls > budget || !failsOn(forgetful{}, noDup, nil)(got) {
			t.Errorf("budget %d: %d candidates run, result fails: %v (go test -run '^TestToyShrinkStopsAtItsBudget$' ./engine)", budget, calls, failsOn(forgetful{}, noDup, nil)(got))
		}
	}
}

// The shrinker adopts no candidate the world's rules reject, even when
// it fails: a predicate that fails everything still leaves every
// increment delivered.
func TestToyShrinkKeepsTheWorldPossible(t *testing.T) {
	s := toyGenerate(famDup, 3)
	got := engine.Shrink(toyWorld, s, func(toySched) bool { return true }, 0)
	if err := toyCheckWorld(got); err != nil {
		t.Errorf("Shrink adopted a world that cannot happen: %v\n%s(go test -run '^TestToyShrinkKeepsTheWorldPossible$' ./engine)", err, toyFormat(got))
	}
	if len(got.Incs) != 1 || len(got.Deliveries) != 1 {
		t.Errorf("an always-failing predicate should shrink to one increment delivered once, got\n%s", toyFormat(got))
	}
}
