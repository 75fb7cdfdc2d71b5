package lootfaults_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// joins is every family and every pair that can be joined (a concurrent
// family does not join one that injects faults).
func joins() []engine.Family {
	fs := slices.Clone(lootfaults.World.Families)
	for i, f := range lootfaults.World.Families {
		for _, g := range lootfaults.World.Families[i+1:] {
			if j := engine.Join(f, g); lootfaults.World.CheckFamily(j) == nil {
				fs = append(fs, j)
			}
		}
	}
	return fs
}

// TestGenSatisfiesTheWorldRules: every generated schedule, of every family
// and joinable pair, is valid and a world that can happen.
func TestGenSatisfiesTheWorldRules(t *testing.T) {
	for _, f := range joins() {
		for seed := uint64(1); seed <= seeds/3; seed++ {
			s := lootfaults.World.Generate(f, seed)
			if err := lootfaults.World.Validate(s); err != nil {
				t.Fatalf("%s seed %d: Validate: %v\n%s", f, seed, err, lootfaults.World.Format(s))
			}
			if err := lootfaults.World.CheckWorld(s); err != nil {
				t.Fatalf("%s seed %d: CheckWorld: %v\n%s", f, seed, err, lootfaults.World.Format(s))
			}
		}
	}
}

// TestInterleavesSaysWhichFamiliesInterleave: a family's schedules are
// ever Concurrent exactly when Interleaves says so (the matrix's budget,
// lootprops.DeepN, depends on it).
func TestInterleavesSaysWhichFamiliesInterleave(t *testing.T) {
	for _, f := range joins() {
		seen := false
		for seed := uint64(1); seed <= seeds/3 && !seen; seed++ {
			seen = lootfaults.World.Generate(f, seed).Concurrent
		}
		if seen != lootfaults.Interleaves(f) {
			t.Errorf("%s: Interleaves says %v, but a Concurrent schedule among seeds 1..%d: %v", f, lootfaults.Interleaves(f), seeds/3, seen)
		}
	}
}

func TestCheckWorldNamesTheRule(t *testing.T) {
	if err := lootfaults.World.CheckWorld(base(lootfaults.Families.Clean)); err != nil {
		t.Fatalf("the base world: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*lootfaults.Schedule)
		rule lootfaults.WorldRule
	}{
		{"no settle request", func(s *lootfaults.Schedule) {
			s.Requests[3].Kind = lootfaults.Kinds.ClaimItem
			s.Requests[3].Player, s.Requests[3].Intent = 2, lootfaults.Intents.Greed
		}, lootfaults.RuleAnnounced},
		{"a request never sent", func(s *lootfaults.Schedule) { s.Deliveries = s.Deliveries[:3] }, lootfaults.RuleSent},
		{"an early trigger", func(s *lootfaults.Schedule) { s.Deliveries[3].At = 9 * time.Second }, lootfaults.RuleTrigger},
		{"two claims in one second", func(s *lootfaults.Schedule) {
			s.Requests = append(s.Requests, lootfaults.Request{ID: 4, Kind: lootfaults.Kinds.ClaimItem, Player: 2, Intent: lootfaults.Intents.Need})
			s.Deliveries = slices.Insert(s.Deliveries, 3, engine.Delivery{At: 2*time.Second + time.Second/2, Msg: 4})
		}, lootfaults.RuleSeconds},
		{"an outsider", func(s *lootfaults.Schedule) { s.Requests[2].Player = 9 }, lootfaults.RuleOutsiders},
		{"a skewed clock", func(s *lootfaults.Schedule) { s.Skews = []time.Duration{0, time.Second} }, lootfaults.RuleClocks},
		{"a stall", func(s *lootfaults.Schedule) {
			s.Faults = []engine.Fault{{Attempt: 3, Effect: 0, Kind: engine.Pause, For: time.Second, OnDelivery: true}}
		}, lootfaults.RulePauses},
		{"a player's second claim", func(s *lootfaults.Schedule) {
			s.Requests = append(s.Requests, lootfaults.Request{ID: 4, Kind: lootfaults.Kinds.ClaimItem, Player: 1, Intent: lootfaults.Intents.Greed})
			s.Deliveries = slices.Insert(s.Deliveries, 3, engine.Delivery{At: 5 * time.Second, Msg: 4})
		}, lootfaults.RuleIntents},
		{"a shared loot code", func(s *lootfaults.Schedule) { second(s).Code = s.Sessions[0].Loot() }, lootfaults.RuleLoot},
		{"a session's snapshot without a member", func(s *lootfaults.Schedule) { second(s).Members = []lootfaults.PlayerID{1} }, lootfaults.RuleTeam},
		{"a session's snapshot with a newcomer", func(s *lootfaults.Schedule) { s.Sessions[0].Members = []lootfaults.PlayerID{1, 2, 3} }, lootfaults.RuleTeam},
		{"a fairness bump at a freeze", func(s *lootfaults.Schedule) { s.Sessions[0].Bumps = []lootfaults.Fair{{Player: 1, Wins: 1}} }, lootfaults.RuleFairness},
		{"wins counted as items land", func(s *lootfaults.Schedule) { second(s); s.CountWins = true }, lootfaults.RuleFairness},
	} {
		s := base(lootfaults.Families.Clean)
		c.edit(&s)
		var we *lootfaults.WorldError
		if err := lootfaults.World.CheckWorld(s); !errors.As(err, &we) || we.Rule != c.rule {
			t.Errorf("%s: checkWorld = %v, want the rule %s (go test -run '^TestCheckWorldNamesTheRule$' ./faults/loot/)", c.name, err, c.rule)
		}
	}
}

// TestDimensionRulesAdmitTheirOwnFamily: a shared loot code, a changed
// snapshot and a changing fairness record, which checkWorld refuses
// elsewhere (TestCheckWorldNamesTheRule), are worlds of their own family
// and of a join that has it.
func TestDimensionRulesAdmitTheirOwnFamily(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*lootfaults.Schedule)
		in   engine.Family
	}{
		{"a shared loot code", func(s *lootfaults.Schedule) { second(s).Code = s.Sessions[0].Loot() }, lootfaults.Families.SharedLoot},
		{"a session's snapshot without a member", func(s *lootfaults.Schedule) { second(s).Members = []lootfaults.PlayerID{1} }, lootfaults.Families.TeamChange},
		{"a fairness bump at a freeze", func(s *lootfaults.Schedule) { s.Sessions[0].Bumps = []lootfaults.Fair{{Player: 1, Wins: 1}} }, lootfaults.Families.FairChange},
		{"wins counted as items land", func(s *lootfaults.Schedule) { second(s); s.CountWins = true }, lootfaults.Families.FairChange},
	} {
		for _, f := range []engine.Family{c.in, engine.Join(lootfaults.Families.Crash, c.in)} {
			s := base(f)
			c.edit(&s)
			if err := lootfaults.World.Validate(s); err != nil {
				t.Fatalf("%s in %s: Validate: %v\n%s", c.name, f, err, lootfaults.World.Format(s))
			}
			if err := lootfaults.World.CheckWorld(s); err != nil {
				t.Errorf("%s in %s: checkWorld = %v, want nil (go test -run '^TestDimensionRulesAdmitTheirOwnFamily$' ./faults/loot/)", c.name, f, err)
			}
		}
	}
}

// base is a world every rule admits: one session of a team of two,
// opened, started, claimed by player 1 and settled at its deadline.
func base(f engine.Family) lootfaults.Schedule {
	return lootfaults.Schedule{
		Frame: engine.Frame{Family: f, Nodes: 2, RetryAfter: time.Second, MaxAttempts: 4, Deliveries: []engine.Delivery{
			{At: 0, Msg: 0}, {At: time.Second / 2, Msg: 1}, {At: 2 * time.Second, Msg: 2}, {At: 10 * time.Second, Msg: 3},
		}},
		Team:     []lootfaults.PlayerID{1, 2},
		Sessions: []lootfaults.Session{{ID: 0, Quantity: 1, Deadline: 10 * time.Second}},
		Requests: []lootfaults.Request{
			{ID: 0, Kind: lootfaults.Kinds.OpenSession}, {ID: 1, Kind: lootfaults.Kinds.StartClaims},
			{ID: 2, Kind: lootfaults.Kinds.ClaimItem, Player: 1, Intent: lootfaults.Intents.Need}, {ID: 3, Kind: lootfaults.Kinds.SettleNow},
		},
	}
}

// second adds a second session to s, as base's first a claim window
// later (opened at 20s, settled at its 30s deadline, no claims), and
// returns it.
func second(s *lootfaults.Schedule) *lootfaults.Session {
	x, r := len(s.Sessions), len(s.Requests)
	s.Sessions = append(s.Sessions, lootfaults.Session{ID: x, Quantity: 1, Deadline: 30 * time.Second})
	for k, kind := range []lootfaults.Kind{lootfaults.Kinds.OpenSession, lootfaults.Kinds.StartClaims, lootfaults.Kinds.SettleNow} {
		s.Requests = append(s.Requests, lootfaults.Request{ID: r + k, Kind: kind, Session: x})
	}
	s.Deliveries = append(s.Deliveries, engine.Delivery{At: 20 * time.Second, Msg: r}, engine.Delivery{At: 20*time.Second + time.Second/2, Msg: r + 1}, engine.Delivery{At: 30 * time.Second, Msg: r + 2})
	return &s.Sessions[x]
}

// TestShrinkOpsKeepTheWorld: the world's drops and canonical give valid
// schedules (checkWorld may reject them: the shrinker then skips them),
// and canonical names players 1, 2, ... with the team first.
func TestShrinkOpsKeepTheWorld(t *testing.T) {
	for _, f := range []engine.Family{lootfaults.Families.Outsider, lootfaults.Families.Crash, lootfaults.Families.Ties} {
		s := lootfaults.World.Generate(f, 7)
		for _, d := range lootfaults.World.Drops(s) {
			for i := range d.N {
				if c, ok := d.Apply(s, i, i+1); ok {
					if err := lootfaults.World.Validate(c); err != nil {
						t.Errorf("%s: dropping item %d of %d: %v\n%s", f, i, d.N, err, lootfaults.World.Format(c))
					}
				}
			}
		}
		c, _ := lootfaults.World.Canonical(s)
		if err := lootfaults.World.CheckWorld(c); err != nil {
			t.Errorf("%s: Canonical: %v", f, err)
		}
		for i, p := range c.Team {
			if p != lootfaults.PlayerID(i+1) {
				t.Errorf("%s: canonical team %v, want 1..%d", f, c.Team, len(c.Team))
			}
		}
		if strings.Contains(lootfaults.World.Format(c), "skew node=") && !slices.Contains(f.Parts(), lootfaults.Families.ClockSkew) {
			t.Errorf("%s: canonical invented a skew", f)
		}
	}
}
