package faults_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// equateEmpty: a schedule without faults may hold nil or an empty slice.
var equateEmpty = cmpopts.EquateEmpty()

func TestFormatParseRoundTripsEveryFamily(t *testing.T) {
	joined := faults.Join(faults.Families.Late, faults.Families.Crash, faults.Families.MultiNode, faults.Families.ThirdKind)
	for _, f := range append(faults.World.Families[:len(faults.World.Families):len(faults.World.Families)], joined) {
		t.Run("family="+string(f), func(t *testing.T) {
			eachSchedule(t, f, func(t fataler, s faults.Schedule, _ uint64) {
				text := faults.World.Format(s)
				got, err := faults.World.Parse(text)
				if err != nil {
					t.Fatalf("parse(format(s)): %v\n%s", err, text)
				}
				// reflect.DeepEqual decides (Gen and parse both leave an
				// empty fault list nil), cmp explains: cmp is slow under -race.
				if !reflect.DeepEqual(s, got) {
					t.Fatalf("parse(format(s)) differs (-want +got):\n%s\ntext:\n%s", cmp.Diff(s, got, equateEmpty), text)
				}
				if again := faults.World.Format(got); again != text {
					t.Fatalf("format is not stable:\n%s\nvs\n%s", text, again)
				}
			})
		})
	}
}

func TestParseReadsHandWrittenSchedule(t *testing.T) {
	text := `
# a hand-written schedule; fields in any order
family late+crash
nodes 2
retry 250ms
max-attempts 4
settle s0 player=1 room=2 match=7 round=1 kind=instant net=-30 final=false seq=1
settle s1 room=2 player=1 match=7 round=1 kind=final net=-30 final=true seq=2 # trailing comment
deliver at=250ms s0 node=0
deliver s1 at=1.5s node=1
fault attempt=1 effect=3 crash-after
`
	got, err := faults.World.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := faults.Schedule{
		Frame: engine.Frame{Family: faults.Join(faults.Families.Late, faults.Families.Crash), Nodes: 2, RetryAfter: faults.MatchEvery / 4, MaxAttempts: 4, Deliveries: []engine.Delivery{{At: faults.MatchEvery / 4, Msg: 0}, {At: 3 * faults.MatchEvery / 2, Msg: 1, Node: 1}}, Faults: []engine.Fault{{Attempt: 1, Effect: 3, Kind: engine.CrashAfter}}},
		Settlements: []faults.Settlement{
			{ID: 0, Player: 1, Room: 2, Match: 7, Round: 1, Kind: faults.KindInstant, Net: -30, Seq: 1},
			{ID: 1, Player: 1, Room: 2, Match: 7, Round: 1, Kind: faults.KindFinal, Net: -30, Final: true, Seq: 2},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("parse (-want +got):\n%s", diff)
	}
}

func TestParseErrorsNameLineAndExpectation(t *testing.T) {
	head := "family clean\nnodes 1\nretry 250ms\nmax-attempts 4\n"
	s0 := "settle s0 player=1 room=2 match=1 round=1 kind=instant net=5 final=false seq=1\n"
	for _, c := range []struct{ name, text, want string }{
		{"bad net", head + "settle s0 player=1 room=2 match=1 round=1 kind=instant net=x final=false seq=1\n", `line 5: want "net=<int>", got "net=x"`},
		{"missing field", head + "settle s0 player=1 room=2 match=1 round=1 kind=instant final=false seq=1\n", `line 5: missing "net=<int>"`},
		{"unknown field", head + "settle s0 player=1 room=2 match=1 round=1 kind=instant net=1 final=false seq=1 colour=red\n", `line 5: unknown field "colour"`},
		{"ids out of order", head + "settle s1 player=1 room=2 match=1 round=1 kind=instant net=1 final=false seq=1\n", `line 5: want the settlement's id "s0"`},
		{"bad kind", head + "settle s0 player=1 room=2 match=1 round=1 kind=bonus net=1 final=false seq=1\n", `line 5: want "kind=instant|final|third|kind<N>", got "kind=bonus"`},
		{"undeclared", head + "deliver at=1s s0 node=0\n", `line 5: s0 is not declared`},
		{"time order", head + s0 + "deliver at=1s s0 node=0\ndeliver at=500ms s0 node=0\n", `line 7: at=500ms is before the previous delivery's at=1s`},
		{"node range", head + s0 + "# comment line\ndeliver at=1s s0 node=3\n", `line 7: node=3 is out of range`},
		{"bad duration", head + s0 + "deliver at=soon s0 node=0\n", `line 6: want "at=<duration 0..10000h0m0s (MaxAt)>", got "at=soon"`},
		{"fault order", head + s0 + "fault attempt=2 effect=0 fail\nfault attempt=1 effect=0 fail\n", `line 7: fault attempt=1 effect=0 must come after attempt=2 effect=0`},
		{"fault kind", head + s0 + "fault attempt=2 effect=0 explode\n", `line 6: want a fault kind (crash-before, crash-after, fail, timeout or pause), got "explode"`},
		{"unknown directive", head + "sette s0\n", `line 5: want a directive`},
		{"unknown family", "family lates\n", `line 1: unknown family "lates" (want one of clean,`},
		{"header twice", head + "nodes 2\n", `line 5: nodes given twice (first on line 2)`},
		{"missing header", "family clean\nnodes 1\nretry 1s\n", `schedule: missing the "max-attempts" header line`},
		{"switches not concurrent", head + "switches 1 0\n", `line 5: switches in a schedule that is not concurrent`},
		{"negative switch", head + "concurrent true\nswitches 1 -1\n", `line 6: want switch 2 to be an integer >= 0, got "-1"`},
		{"empty switches", head + "concurrent true\nswitches\n", `line 6: want "switches" followed by one or more choices >= 0`},
		{"switches twice", head + "concurrent true\nswitches 1\nswitches 2\n", `line 7: switches given twice (first on line 6)`},
		{"duplicate settlement", head + s0 + "settle s1 player=1 room=3 match=1 round=1 kind=instant net=5 final=false seq=2\n", `line 6: s1 is the same settlement as s0 (player=1 match=1 kind=instant)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := faults.World.Parse(c.text)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("parse error = %v, want it to contain %q\n(go test ./faults -run 'TestParseErrorsNameLineAndExpectation/%s')", err, c.want, strings.ReplaceAll(c.name, " ", "_"))
			}
		})
	}
}

func TestFormatParseRoundTripsSwitches(t *testing.T) {
	s := faults.Schedule{Frame: engine.Frame{Family: faults.Families.Concurrent, Nodes: 2, RetryAfter: time.Second, MaxAttempts: 4, Concurrent: true, Switches: []int{1, 0, 2, 1}}}
	text := faults.World.Format(s)
	if !strings.Contains(text, "\nswitches 1 0 2 1\n") {
		t.Fatalf("format does not write the switches line:\n%s", text)
	}
	got, err := faults.World.Parse(text)
	if err != nil {
		t.Fatalf("parse(format(s)): %v\n%s", err, text)
	}
	if diff := cmp.Diff(s, got); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
	// Absent means all zeros: nil, and no line written.
	s.Switches = nil
	if text := faults.World.Format(s); strings.Contains(text, "switches") {
		t.Fatalf("format writes a switches line for nil switches:\n%s", text)
	}
	if err := faults.World.Validate(faults.Schedule{Frame: engine.Frame{Family: faults.Families.Clean, Nodes: 1, RetryAfter: time.Second, MaxAttempts: 1, Switches: []int{1}}}); err == nil {
		t.Fatal("validate accepts switches in a schedule that is not concurrent")
	}
	if err := faults.World.Validate(faults.Schedule{Frame: engine.Frame{Family: faults.Families.Concurrent, Nodes: 1, RetryAfter: time.Second, MaxAttempts: 1, Concurrent: true, Switches: []int{-1}}}); err == nil {
		t.Fatal("validate accepts a negative switch")
	}
}

// TestParseRejectsEveryDimensionPastItsLimit: a hostile or mistyped file
// fails with one line naming the limit, before anything is allocated for it
// ("nodes 99999999999" used to make Run build a node per id).
func TestParseRejectsEveryDimensionPastItsLimit(t *testing.T) {
	header := "family clean\nnodes 1\nretry 250ms\nmax-attempts 16\n"
	settle := "settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1\n"
	many := func(n int, line func(i int) string) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(line(i))
		}
		return b.String()
	}
	for name, tc := range map[string]struct{ text, want string }{
		"nodes":        {strings.Replace(header, "nodes 1", "nodes 99999999999", 1), "MaxNodes"},
		"nodes-65":     {strings.Replace(header, "nodes 1", "nodes 65", 1), "MaxNodes"},
		"retry":        {strings.Replace(header, "retry 250ms", "retry 2h", 1), "MaxRetryAfter"},
		"max-attempts": {strings.Replace(header, "max-attempts 16", "max-attempts 1000000", 1), "MaxAttempts"},
		"at":           {header + settle + "deliver at=10001h s0 node=0\n", "MaxAt"},
		"attempt":      {header + settle + fmt.Sprintf("fault attempt=%d effect=0 fail\n", engine.MaxAttemptIndex+1), "MaxAttemptIndex"},
		"effect":       {header + settle + "fault attempt=0 effect=5000 fail\n", "MaxEffectIndex"},
		"switches": {strings.Replace(header, "family clean", "family concurrent", 1) + "concurrent true\nswitches" +
			strings.Repeat(" 1", engine.MaxSwitches+1) + "\n", "MaxSwitches"},
		"settlements": {header + many(faults.MaxSettlements+1, func(i int) string {
			return fmt.Sprintf("settle s%d player=%d room=1 match=1 round=1 kind=instant net=10 final=false seq=1\n", i, i+1)
		}), "MaxSettlements"},
		"deliveries": {header + settle + many(engine.MaxDeliveries+1, func(int) string { return "deliver at=1s s0 node=0\n" }), "MaxDeliveries"},
		"faults": {header + settle + many(engine.MaxFaults+1, func(i int) string {
			return fmt.Sprintf("fault attempt=%d effect=%d fail\n", i/2, i%2)
		}), "MaxFaults"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := faults.World.Parse(tc.text)
			var pe *engine.ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("parse = %v, want one line naming %s", err, tc.want)
			}
		})
	}
}

// TestValidateEnforcesTheLimitsOnBuiltSchedules: Run refuses, by the same
// rules, a schedule built in code rather than parsed.
func TestValidateEnforcesTheLimitsOnBuiltSchedules(t *testing.T) {
	base := faults.Schedule{Frame: engine.Frame{Family: faults.Families.Clean, Nodes: 1, RetryAfter: time.Second, MaxAttempts: 1}}
	for name, mut := range map[string]func(*faults.Schedule){
		"nodes":       func(s *faults.Schedule) { s.Nodes = faults.MaxNodes + 1 },
		"retry":       func(s *faults.Schedule) { s.RetryAfter = engine.MaxRetryAfter + 1 },
		"attempts":    func(s *faults.Schedule) { s.MaxAttempts = engine.MaxAttempts + 1 },
		"settlements": func(s *faults.Schedule) { s.Settlements = make([]faults.Settlement, faults.MaxSettlements+1) },
	} {
		s := base
		mut(&s)
		if err := faults.World.Validate(s); err == nil {
			t.Errorf("%s: validate accepted a schedule past the limit", name)
		}
	}
	if err := faults.World.Validate(base); err != nil {
		t.Fatalf("validate(base) = %v", err)
	}
}
