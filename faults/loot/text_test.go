package lootfaults_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// seeds is how many generated schedules a test looks at per family: the
// generators draw each family's features in every schedule, so a few
// dozen meet every branch (a rapid.Check of 100 per family would cost the
// race detector's minutes for no more).
const seeds = 30

func TestFormatParseRoundTripsEveryFamily(t *testing.T) {
	fams := append(lootfaults.World.Families[:len(lootfaults.World.Families):len(lootfaults.World.Families)],
		engine.Join(lootfaults.Families.Crash, lootfaults.Families.LockExpiry, lootfaults.Families.Quantity),
		engine.Join(lootfaults.Families.ClockSkew, lootfaults.Families.LateClaim, lootfaults.Families.Outsider))
	for _, f := range fams {
		for seed := uint64(1); seed <= seeds; seed++ {
			s := lootfaults.World.Generate(f, seed)
			text := lootfaults.World.Format(s)
			got, err := lootfaults.World.Parse(text)
			if err != nil {
				t.Fatalf("%s seed %d: parse(format(s)): %v\n%s", f, seed, err, text)
			}
			if !reflect.DeepEqual(s, got) {
				t.Fatalf("%s seed %d: parse(format(s)) differs (-want +got):\n%s\ntext:\n%s", f, seed, cmp.Diff(s, got), text)
			}
		}
	}
}

func TestParseReadsHandWrittenSchedule(t *testing.T) {
	text := `
family loot:lock-expiry
nodes 2
retry 250ms
max-attempts 4
team 1 2 3
fair player=2 wins=1
session x0 deadline=10s quantity=2
request r0 open x0
request r1 claim x0 intent=GREED player=3 # fields in any order
request r2 settle x0
request r3 compensate
deliver at=0s r0 node=0
deliver at=1s r1 node=1
deliver at=10s r2 node=0
deliver at=13s r3 node=1
fault delivery=2 effect=1 pause for=35s
`
	s, err := lootfaults.World.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	want := lootfaults.Schedule{
		Frame: engine.Frame{Family: lootfaults.Families.LockExpiry, Nodes: 2, RetryAfter: 250e6, MaxAttempts: 4,
			Deliveries: []engine.Delivery{{At: 0, Msg: 0}, {At: 1e9, Msg: 1, Node: 1}, {At: 10e9, Msg: 2}, {At: 13e9, Msg: 3, Node: 1}},
			Faults:     []engine.Fault{{Attempt: 2, Effect: 1, Kind: engine.Pause, For: 35e9, OnDelivery: true}}},
		Team:     []lootfaults.PlayerID{1, 2, 3},
		Fairness: []lootfaults.Fair{{Player: 2, Wins: 1}},
		Sessions: []lootfaults.Session{{ID: 0, Quantity: 2, Deadline: 10e9}},
		Requests: []lootfaults.Request{
			{ID: 0, Kind: lootfaults.Kinds.OpenSession}, {ID: 1, Kind: lootfaults.Kinds.ClaimItem, Player: 3, Intent: lootfaults.Intents.Greed},
			{ID: 2, Kind: lootfaults.Kinds.SettleNow}, {ID: 3, Kind: lootfaults.Kinds.Compensate, Session: -1},
		},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("parse (-want +got):\n%s", diff)
	}
}

func TestParseErrorsNameLineAndExpectation(t *testing.T) {
	head := "family loot:clean\nnodes 1\nretry 250ms\nmax-attempts 4\nteam 1 2\nsession x0 quantity=1 deadline=10s\n"
	for _, c := range []struct{ name, text, want string }{
		{"settlement file", "family clean\nnodes 1\nretry 1s\nmax-attempts 1\n", `line 1: family "clean" is of subject "settle", not "loot"`},
		{"unknown family", "family loot:late\n", `unknown loot family "late"`},
		{"request before its session", head + "request r0 open x1\n", "line 7: x1 is not a declared session"},
		{"claim without a player", head + "request r0 claim x0 intent=NEED\n", `line 7: want "player=<id > 0>"`},
		{"player on a settle", head + "request r0 settle x0 player=1\n", "line 7: only a claim has a player"},
		{"compensate with a session", head + "request r0 compensate x0\n", "line 7: a compensate request names no session"},
		{"ids out of order", head + "request r1 open x0\n", `line 7: want "r0" followed by a kind`},
		{"team unsorted", "family loot:clean\nnodes 1\nretry 1s\nmax-attempts 1\nteam 2 1\n", "team member 1 is 1: want ids > 0, sorted, distinct"},
		{"a fault past the deliveries", head + "request r0 open x0\ndeliver at=0s r0 node=0\nfault delivery=3 effect=0 fail\n", "want a planned delivery 0..0"},
		{"a pause without a duration", head + "request r0 open x0\ndeliver at=0s r0 node=0\nfault delivery=0 effect=0 pause\n", `want "for=<duration > 0`},
	} {
		_, err := lootfaults.World.Parse(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: parse error = %v, want it to contain %q", c.name, err, c.want)
		}
	}
}
