package lootworld_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/lootworld"
)

// joins is every family and every pair that can be joined (a concurrent
// family does not join one that injects faults).
func joins() []engine.Family {
	fs := slices.Clone(lootworld.Families)
	for i, f := range lootworld.Families {
		for _, g := range lootworld.Families[i+1:] {
			if j := engine.Join(f, g); lootworld.CheckFamily(j) == nil {
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
			s := lootworld.Generate(f, seed)
			if err := lootworld.Validate(s); err != nil {
				t.Fatalf("%s seed %d: Validate: %v\n%s", f, seed, err, lootworld.Format(s))
			}
			if err := lootworld.CheckWorld(s); err != nil {
				t.Fatalf("%s seed %d: CheckWorld: %v\n%s", f, seed, err, lootworld.Format(s))
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
			seen = lootworld.Generate(f, seed).Concurrent
		}
		if seen != lootworld.Interleaves(f) {
			t.Errorf("%s: Interleaves says %v, but a Concurrent schedule among seeds 1..%d: %v", f, lootworld.Interleaves(f), seeds/3, seen)
		}
	}
}

func TestCheckWorldNamesTheRule(t *testing.T) {
	base := func(f engine.Family) lootworld.Schedule {
		return lootworld.Schedule{
			Frame: engine.Frame{Family: f, Nodes: 2, RetryAfter: time.Second, MaxAttempts: 4, Deliveries: []engine.Delivery{
				{At: 0, Msg: 0}, {At: time.Second / 2, Msg: 1}, {At: 2 * time.Second, Msg: 2}, {At: 10 * time.Second, Msg: 3},
			}},
			Team:     []lootworld.PlayerID{1, 2},
			Sessions: []lootworld.Session{{ID: 0, Quantity: 1, Deadline: 10 * time.Second}},
			Requests: []lootworld.Request{
				{ID: 0, Kind: lootworld.OpenSession}, {ID: 1, Kind: lootworld.StartClaims},
				{ID: 2, Kind: lootworld.ClaimItem, Player: 1, Intent: lootworld.Need}, {ID: 3, Kind: lootworld.SettleNow},
			},
		}
	}
	if err := lootworld.CheckWorld(base(lootworld.Clean)); err != nil {
		t.Fatalf("the base world: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*lootworld.Schedule)
		rule lootworld.WorldRule
	}{
		{"no settle request", func(s *lootworld.Schedule) {
			s.Requests[3].Kind = lootworld.ClaimItem
			s.Requests[3].Player, s.Requests[3].Intent = 2, lootworld.Greed
		}, lootworld.RuleAnnounced},
		{"a request never sent", func(s *lootworld.Schedule) { s.Deliveries = s.Deliveries[:3] }, lootworld.RuleSent},
		{"an early trigger", func(s *lootworld.Schedule) { s.Deliveries[3].At = 9 * time.Second }, lootworld.RuleTrigger},
		{"two claims in one second", func(s *lootworld.Schedule) {
			s.Requests = append(s.Requests, lootworld.Request{ID: 4, Kind: lootworld.ClaimItem, Player: 2, Intent: lootworld.Need})
			s.Deliveries = slices.Insert(s.Deliveries, 3, engine.Delivery{At: 2*time.Second + time.Second/2, Msg: 4})
		}, lootworld.RuleSeconds},
		{"an outsider", func(s *lootworld.Schedule) { s.Requests[2].Player = 9 }, lootworld.RuleOutsiders},
		{"a skewed clock", func(s *lootworld.Schedule) { s.Skews = []time.Duration{0, time.Second} }, lootworld.RuleClocks},
		{"a stall", func(s *lootworld.Schedule) {
			s.Faults = []engine.Fault{{Attempt: 3, Effect: 0, Kind: engine.Pause, For: time.Second, OnDelivery: true}}
		}, lootworld.RulePauses},
	} {
		s := base(lootworld.Clean)
		c.edit(&s)
		var we *lootworld.WorldError
		if err := lootworld.CheckWorld(s); !errors.As(err, &we) || we.Rule != c.rule {
			t.Errorf("%s: CheckWorld = %v, want the rule %s", c.name, err, c.rule)
		}
	}
}

// TestShrinkOpsKeepTheWorld: the world's drops and Canonical give valid
// schedules (CheckWorld may reject them: the shrinker then skips them),
// and Canonical names players 1, 2, ... with the team first.
func TestShrinkOpsKeepTheWorld(t *testing.T) {
	for _, f := range []engine.Family{lootworld.Outsider, lootworld.Crash, lootworld.Ties} {
		s := lootworld.Generate(f, 7)
		for _, d := range lootworld.Drops(s) {
			for i := range d.N {
				if c, ok := d.Apply(s, i, i+1); ok {
					if err := lootworld.Validate(c); err != nil {
						t.Errorf("%s: dropping item %d of %d: %v\n%s", f, i, d.N, err, lootworld.Format(c))
					}
				}
			}
		}
		c, _ := lootworld.Canonical(s)
		if err := lootworld.CheckWorld(c); err != nil {
			t.Errorf("%s: Canonical: %v", f, err)
		}
		for i, p := range c.Team {
			if p != lootworld.PlayerID(i+1) {
				t.Errorf("%s: Canonical team %v, want 1..%d", f, c.Team, len(c.Team))
			}
		}
		if strings.Contains(lootworld.Format(c), "skew node=") && !slices.Contains(f.Parts(), lootworld.ClockSkew) {
			t.Errorf("%s: Canonical invented a skew", f)
		}
	}
}
