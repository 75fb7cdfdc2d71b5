package engine_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// Every generated schedule prints and parses back to itself, and is a
// valid world that can happen.
func TestToyScheduleTextRoundTrips(t *testing.T) {
	check := func(s toySched, what string) {
		t.Helper()
		if err := toyValidate(s); err != nil {
			t.Errorf("%s is invalid: %v", what, err)
		}
		if err := toyCheckWorld(s); err != nil {
			t.Errorf("%s cannot happen: %v", what, err)
		}
		text := toyFormat(s)
		back, err := toyParse(text)
		if err != nil || !reflect.DeepEqual(back, s) || toyFormat(back) != text {
			t.Errorf("%s does not round-trip: %v\n%s(go test -run '^TestToyScheduleTextRoundTrips$' ./engine)", what, err, text)
		}
	}
	for _, f := range toyFamilies {
		if all, _, ok := toyWorld.Exhaustive(f); ok {
			for s := range all {
				check(s, string(f))
			}
			continue
		}
		for seed := uint64(1); seed <= 30; seed++ {
			check(toyGenerate(f, seed), fmt.Sprintf("toyGenerate(%q, %d)", f, seed))
		}
	}
	if got := engine.SubjectOf(toyFormat(toyGenerate(famDup, 1))); got != "toy" {
		t.Errorf("SubjectOf a toy schedule = %q, want toy", got)
	}
	if got := engine.SubjectOf("# no family\nnodes 1\nfamily dup # a settlement's\n"); got != "" {
		t.Errorf("SubjectOf a settlement schedule = %q, want the default subject", got)
	}
}

// toyBase is a valid schedule the parse cases change one line of.
var toyBase = toyHeader(famDup, 1) + `inc i0 amount=1
deliver at=0s i0 node=0
`

// Each malformed text fails on the line at fault with a message naming
// what was wanted.
func TestToyParseNamesTheLineAndWhatItWants(t *testing.T) {
	for _, c := range []struct {
		text string // toyBase with the lines after it, or a whole text with a leading "!"
		want string
	}{
		{"frobnicate 1", `line 7: want a directive (family, nodes, retry, max-attempts, concurrent, give-up, switches, inc, drains, racer, deliver, fault, outage), got "frobnicate"`},
		{"nodes 2", "line 7: nodes given twice (first on line 2)"},
		{"!family dup\nnodes 1\n", `line 1: family "dup" is of subject "settle", not "toy" (a toy schedule's family header reads "toy:<family>")`},
		{"!family toy:nope\n", `line 1: unknown toy family "nope" (want one of dup, crash`},
		{"!family toy:small+crash\n", `joins small or concurrent, which have no faults`},
		{"!nodes 0\n", `line 1: want "nodes" followed by a node count 1..64 (MaxNodes), got "0"`},
		{"!nodes 1 2\n", `line 1: want "nodes" followed by a node count 1..64 (MaxNodes), got 2 values`},
		{"!retry 0s\n", `line 1: want "retry" followed by a duration > 0 and <= 1h0m0s`},
		{"!max-attempts x\n", `line 1: want "max-attempts" followed by an attempt count 1..1024`},
		{"concurrent maybe", `line 7: want "concurrent" followed by true or false, got "maybe"`},
		{"give-up True", `line 7: want "give-up" followed by true or false, got "True"`},
		{"switches", `line 7: want "switches" followed by one or more choices >= 0`},
		{"switches 1 -1", `line 7: want switch 2 to be an integer >= 0, got "-1"`},
		{"switches 1\nswitches 1", "line 8: switches given twice (first on line 7)"},
		{"switches 1", `line 7: switches in a schedule that is not concurrent (add "concurrent true" or drop the line)`},
		{"deliver at=0s i5 node=0", "line 7: i5 is not declared (declare increments before the deliveries that name them; 1 declared)"},
		{"deliver at=x i0 node=0", `line 7: want "at=<duration 0..10000h0m0s (MaxAt)>", got "at=x"`},
		{"deliver i0 node=0", `line 7: missing "at=<duration>"`},
		{"deliver at=0s at=1s i0 node=0", `line 7: field "at" given twice`},
		{"deliver at=0s i0 node=0 color=red", `line 7: unknown field "color" (want at, node)`},
		{"deliver at=0s node=0", `line 7: want one increment id (e.g. i3), got ""`},
		{"deliver at=0s x0 node=0", `line 7: want a increment id (e.g. i3), got "x0"`},
		{"deliver at=0s i00 node=0", `line 7: want a increment id (e.g. i3), got "i00"`},
		{"deliver at=1s i0 node=0\ndeliver at=0s i0 node=0", "line 8: at=0s is before the previous delivery's at=1s (deliveries are in time order)"},
		{"deliver at=0s i0 node=-1", `line 7: want "node=<int >= 0>", got "node=-1"`},
		{"deliver at=0s i0 node=5", "line 7: node=5 is out of range (nodes 1: want 0..0)"},
		{"fault effect=0 fail", `line 7: want exactly one of "attempt=<int>"`},
		{"fault attempt=0 recover=0 effect=0 fail", `line 7: want exactly one of "attempt=<int>"`},
		{"fault attempt=0 effect=0 explode", `line 7: want a fault kind (crash-before, crash-after, fail, timeout or pause), got "explode"`},
		{"fault attempt=0 effect=0", `line 7: want one fault kind (crash-before, crash-after, fail, timeout or pause), got ""`},
		{"fault attempt=0 effect=0 pause", `line 7: want "for=<duration > 0 and <= 1h0m0s (MaxPause)>", got "for="`},
		{"fault attempt=0 effect=0 fail for=1s", "line 7: for=1s on a fail fault (only a pause lasts)"},
		{"fault attempt=x effect=0 fail", fmt.Sprintf(`line 7: want "attempt=<int 0..%d (MaxAttemptIndex)>", got "attempt=x"`, engine.MaxAttemptIndex)},
		{"fault recover=x effect=0 fail", fmt.Sprintf(`line 7: want "recover=<int 0..%d (MaxAttemptIndex)>", got "recover=x"`, engine.MaxAttemptIndex)},
		{"fault delivery=x effect=0 fail", fmt.Sprintf(`line 7: want "delivery=<int 0..%d (MaxAttemptIndex)>", got "delivery=x"`, engine.MaxAttemptIndex)},
		{"fault attempt=0 effect=x fail", `line 7: want "effect=<int 0..1024 (MaxEffectIndex)>", got "effect=x"`},
		{"fault attempt=1 effect=0 fail\nfault attempt=0 effect=0 fail", "line 8: fault attempt=0 effect=0 must come after attempt=1 effect=0"},
		{"fault delivery=3 effect=0 fail", "schedule: fault 0 is at delivery=3 effect=0, want a planned delivery 0..0"},
		{"fault recover=0 effect=0 pause for=1s", "schedule: fault 0 pauses a Recover (recover=0 effect=0)"},
		{"concurrent true\nfault attempt=0 effect=0 fail", "schedule: a concurrent schedule has no faults"},
		{"!family toy:dup\nnodes 1\nmax-attempts 4\n", `schedule: missing the "retry" header line`},
		{"inc i0 amount=1", `line 7: want increment i1 next, got "i0"`},
		{"inc i1 amount=x", `line 7: want "amount=<1..9>", got "amount=x"`},
		{"inc i1", `line 7: missing "amount=<1..9>"`},
		{"inc amount=1", `line 7: want one increment id, got ""`},
		{"inc i1 amount=12\ndeliver at=0s i1 node=0", "schedule: increment i1 adds 12, want 1..9"},
		{"drains many", `line 7: want "drains" followed by a count, got "many"`},
		{"drains 9", "schedule: drains is 9, want 0..4"},
	} {
		text := toyBase + c.text + "\n"
		if rest, ok := strings.CutPrefix(c.text, "!"); ok {
			text = rest
		}
		_, err := toyParse(text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse of\n%s= %v\nwant an error with %q (go test -run '^TestToyParseNamesTheLineAndWhatItWants$' ./engine)", text, err, c.want)
		}
	}
}

// A schedule file's header must name properties of its world.
func TestToySchedFileRefusesAnUnknownProperty(t *testing.T) {
	_, err := engine.ParseSchedFile(toyWorld, "# design: keyed\n# fails: NoDup, Bogus\n"+toyBase)
	if err == nil || !strings.Contains(err.Error(), `unknown property "Bogus" (want one of NoDup, NoLoss, HonestAck, Responsive, Tidy)`) {
		t.Errorf("ParseSchedFile with an unknown property: %v", err)
	}
}

// ValidateFrame refuses what no parse makes: frames built in code.
func TestToyValidateFrameRefusesBrokenFrames(t *testing.T) {
	m := engine.Messages{N: 1, Letter: "i", Noun: "increment"}
	ok := func() engine.Frame {
		return engine.Frame{Family: famDup, Nodes: 1, RetryAfter: time.Second, MaxAttempts: 1, Deliveries: []engine.Delivery{{}}}
	}
	for _, c := range []struct {
		change func(f *engine.Frame)
		want   string
	}{
		{func(f *engine.Frame) { f.Nodes = engine.MaxNodes + 1 }, "nodes is 65, want 1..64 (MaxNodes)"},
		{func(f *engine.Frame) { f.RetryAfter = 0 }, "retry is 0s"},
		{func(f *engine.Frame) { f.MaxAttempts = 0 }, "max-attempts is 0"},
		{func(f *engine.Frame) { f.Switches = make([]int, engine.MaxSwitches+1) }, "switches, over the limit of 65536 (MaxSwitches)"},
		{func(f *engine.Frame) { f.Deliveries[0].Msg = 1 }, "delivery 0 names i1, want i0..i0"},
		{func(f *engine.Frame) { f.Deliveries[0].Node = 1 }, "delivery 0 is at node 1, want 0..0"},
		{func(f *engine.Frame) { f.Deliveries[0].At = -1 }, "delivery 0 is at -1ns"},
		{func(f *engine.Frame) { f.Deliveries = append(f.Deliveries, engine.Delivery{At: -1}) }, "delivery 1 is at -1ns"},
		{func(f *engine.Frame) {
			f.Deliveries = []engine.Delivery{{At: time.Second}, {}}
		}, "delivery 1 at 0s is before delivery 0 at 1s"},
		{func(f *engine.Frame) { f.Switches = []int{1} }, "switches in a schedule that is not concurrent"},
		{func(f *engine.Frame) { f.Concurrent, f.Switches = true, []int{-1} }, "switch 0 is -1, want >= 0"},
		{func(f *engine.Frame) { f.Faults = []engine.Fault{{Attempt: engine.MaxAttemptIndex + 1}} }, fmt.Sprintf("fault 0 is at attempt=%d effect=0", engine.MaxAttemptIndex+1)},
		{func(f *engine.Frame) { f.Faults = []engine.Fault{{Kind: engine.Pause + 1}} }, "fault 0 has unknown kind 5"},
		{func(f *engine.Frame) { f.Faults = []engine.Fault{{Attempt: 1}, {Attempt: 0}} }, "fault 1 (attempt=0 effect=0) is not after fault 0 (attempt=1 effect=0)"},
		{func(f *engine.Frame) {
			f.Faults = []engine.Fault{{Attempt: 0, OnDelivery: true}, {Attempt: 0}}
		}, "fault 1 (attempt=0 effect=0) is not after fault 0 (delivery=0 effect=0)"},
	} {
		f := ok()
		c.change(&f)
		if err := engine.ValidateFrame(f, m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateFrame(%+v) = %v, want an error with %q (go test -run '^TestToyValidateFrameRefusesBrokenFrames$' ./engine)", f, err, c.want)
		}
	}
	if err := engine.ValidateFrame(ok(), m); err != nil {
		t.Errorf("ValidateFrame refuses the valid frame: %v", err)
	}
}
