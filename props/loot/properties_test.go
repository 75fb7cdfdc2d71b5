package lootprops_test

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/props"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// session is one session of members 1..3 with claims by 1 (NEED, at 1s)
// and 2 (NEED, at 2s), settled at its 10s deadline on node 0.
func session(f engine.Family) lootfaults.Schedule {
	return lootfaults.Schedule{
		Frame: engine.Frame{Family: f, Nodes: 1, RetryAfter: 250 * time.Millisecond, MaxAttempts: 4, Deliveries: []engine.Delivery{
			{At: 0, Msg: 0}, {At: time.Second / 2, Msg: 1}, {At: time.Second, Msg: 2}, {At: 2 * time.Second, Msg: 3}, {At: 10 * time.Second, Msg: 4},
		}},
		Team:     []lootfaults.PlayerID{1, 2, 3},
		Sessions: []lootfaults.Session{{ID: 0, Quantity: 1, Deadline: 10 * time.Second}},
		Requests: []lootfaults.Request{
			{ID: 0, Kind: lootfaults.Kinds.OpenSession}, {ID: 1, Kind: lootfaults.Kinds.StartClaims},
			{ID: 2, Kind: lootfaults.Kinds.ClaimItem, Player: 1, Intent: lootfaults.Intents.Need},
			{ID: 3, Kind: lootfaults.Kinds.ClaimItem, Player: 2, Intent: lootfaults.Intents.Need},
			{ID: 4, Kind: lootfaults.Kinds.SettleNow},
		},
	}
}

func TestEveryPropertyHoldsForTheTinyDesign(t *testing.T) {
	for _, f := range lootfaults.World.Families {
		s := lootfaults.World.Generate(f, 3)
		r := lootprops.Judge(lootfaults.Run(tiny{name: "tiny"}, s, engine.RunOptions{}))
		for _, v := range r {
			if v.Outcome != engine.Holds && !(f == lootfaults.Families.Crash || f == lootfaults.Families.StoreError || f == lootfaults.Families.TimeoutSuccess || f == lootfaults.Families.CompensationRace || f == lootfaults.Families.LockExpiry) {
				// tiny has no recovery, so the fault families may lose;
				// every other family must hold.
				t.Errorf("%s: %v\n%s", f, v, lootfaults.World.Format(s))
			}
		}
	}
	if r := lootprops.Judge(lootfaults.Run(tiny{name: "tiny"}, session(lootfaults.Families.Clean), engine.RunOptions{})); len(r.Failed()) > 0 {
		t.Fatalf("the hand-written session fails %v:\n%v", r.Failed(), r)
	}
}

// TestPropertiesHaveTeeth: a design broken one way fails the property
// that guards it, with an anomaly that says what happened, and nothing
// else that is not a consequence.
func TestPropertiesHaveTeeth(t *testing.T) {
	for _, c := range []struct {
		d       tiny
		s       lootfaults.Schedule
		fail    []engine.Property
		explain string
	}{
		{tiny{name: "liar", lie: true}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.FrozenClaims, lootfaults.Properties.HonestAnswer}, "was answered accepted, but no NEED claim of player 1 is recorded"},
		{tiny{name: "twice", twice: true}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.NoOverGrant, lootfaults.Properties.NoDupGrant}, "player 1 got x0's item 2 times"},
		{tiny{name: "panics", panics: true}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.NoLostGrant, lootfaults.Properties.Responsive}, "panicked: tiny: settle"},
		{tiny{name: "refuses-a-claim", refuseClaimOf: 1}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.HonestAnswer},
			"r2 (player 1's NEED claim on x0) was refused, but x0 was CLAIMING, player 1 is in the team, and the deadline 10s was ahead by the database's clock (1s)"},
		{tiny{name: "refuses-opens", refuseOpen: true}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.HonestAnswer},
			"r0 (open x0) was refused, but x0 did not exist and its deadline 10s was ahead by the database's clock (0s)"},
		{tiny{name: "notes-claims", noteClaims: true}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.HonestAnswer},
			"r2 (player 1's NEED claim on x0) was answered noted and nothing was recorded, but x0 was CLAIMING"},
		{tiny{name: "nacks-opens", nackOpen: true}, session(lootfaults.Families.Clean), []engine.Property{lootfaults.Properties.NoLostGrant},
			"r0 (open x0) was never answered: the sender gave up on r0 after 12 sends"},
		// An outsider's claim, and a member's after the deadline, are
		// refused by the rules: not a dishonest answer.
		{tiny{name: "refuses-an-outsider", refuseClaimOf: 4}, outsiderClaims(), nil, ""},
	} {
		r := lootprops.Judge(lootfaults.Run(c.d, c.s, engine.RunOptions{}))
		if !slices.Equal(r.Failed(), c.fail) || !strings.Contains(r.String(), c.explain) {
			t.Errorf("%s fails %v, want %v with %q:\n%v", c.d.name, r.Failed(), c.fail, c.explain, r)
		}
	}
}

// outsiderClaims is session with player 4 (not in the team) claiming at
// 3s and player 3 claiming at the 10s deadline, just before the settle:
// the session is still CLAIMING, but its deadline has come.
func outsiderClaims() lootfaults.Schedule {
	s := session(lootfaults.Families.Clean)
	s.Requests = append(s.Requests,
		lootfaults.Request{ID: 5, Kind: lootfaults.Kinds.ClaimItem, Player: 4, Intent: lootfaults.Intents.Need},
		lootfaults.Request{ID: 6, Kind: lootfaults.Kinds.ClaimItem, Player: 3, Intent: lootfaults.Intents.Need})
	d := s.Deliveries
	s.Deliveries = append(d[:len(d)-1:len(d)-1], engine.Delivery{At: 3 * time.Second, Msg: 5}, engine.Delivery{At: 10 * time.Second, Msg: 6}, d[len(d)-1])
	return s
}

// TestRuleOrderIsTheRule: the oracle ranks priority, then fewest wins,
// then the earliest claim, then the lowest id.
func TestRuleOrderIsTheRule(t *testing.T) {
	s := session(lootfaults.Families.Ties)
	s.Requests[3].Intent = lootfaults.Intents.Greed
	h := lootfaults.Run(tiny{name: "tiny"}, s, engine.RunOptions{})
	if v, _ := lootprops.Judge(h).Verdict(lootfaults.Properties.RuleOrder); v.Outcome != engine.Holds {
		t.Fatalf("NEED over GREED: %v", v)
	}
	s.Requests[3].Intent = lootfaults.Intents.Need
	s.Fairness = []lootfaults.Fair{{Player: 1, Wins: 1}}
	h = lootfaults.Run(tiny{name: "tiny"}, s, engine.RunOptions{})
	if v, _ := lootprops.Judge(h).Verdict(lootfaults.Properties.RuleOrder); v.Outcome != engine.Holds {
		t.Fatalf("fewest wins first: %v", v)
	}
}

// TestTheKitJudgesALootDesign: lootprops.TestDesign is the settlement
// kit's engine.TestDesign over the loot world: the reference holds in
// every family with the options a user would pass.
func TestTheKitJudgesALootDesign(t *testing.T) {
	lootprops.TestDesign(t, lootref.Design{}, engine.Schedules(8, 1), engine.Dir(t.TempDir()))
}

// One test binary may use both kits: the flags are the engine's, defined
// once (two definitions of one name would panic the binary at start), and
// lootprops.TestDesign reads the same -onceproof.n as props.TestDesign.
func TestBothKitsInOneBinaryShareTheFlags(t *testing.T) {
	_ = props.TestDesign // this binary links props as well as lootprops
	for _, name := range []string{"onceproof.n", "onceproof.seed"} {
		if flag.Lookup(name) == nil {
			t.Errorf("-%s is not registered in a binary importing props and lootprops (go test -run '^TestBothKitsInOneBinaryShareTheFlags$' ./props/loot/)", name)
		}
	}
}
