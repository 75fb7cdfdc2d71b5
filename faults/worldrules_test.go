package faults_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// joinable reports whether f and g can be joined (a concurrent schedule
// has no faults, so concurrent does not join the fault families; the small
// scope is an enumeration and joins nothing).
func joinable(f, g faults.Family) bool {
	if f == faults.Families.SmallScope || g == faults.Families.SmallScope {
		return false
	}
	faulty := func(x faults.Family) bool {
		return x == faults.Families.Crash || x == faults.Families.StoreError || x == faults.Families.TimeoutSuccess || x == faults.Families.MultiNode || x == faults.Families.Pause
	}
	return !(f == faults.Families.Concurrent && faulty(g) || g == faults.Families.Concurrent && faulty(f))
}

// worldFamilies is every family, every joinable pair, and the joins whose
// rules differ from their parts' (late+interleave: return gap 3; with
// room-return: gap 1; with sequence-rewind: seq restarts).
func worldFamilies() []faults.Family {
	fs := slices.Clone(faults.World.Families)
	for i, f := range faults.World.Families {
		for _, g := range faults.World.Families[i+1:] {
			if joinable(f, g) {
				fs = append(fs, faults.Join(f, g))
			}
		}
	}
	return append(fs,
		faults.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.Duplicate),
		faults.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.RoomReturn),
		faults.Join(faults.Families.SequenceRewind, faults.Families.RoomReturn, faults.Families.ThirdKind),
		faults.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.Crash, faults.Families.MultiNode),
	)
}

// TestGenSatisfiesTheWorldRules: every generated schedule, of every family
// and join, is in the world model, and renumber leaves it as it is.
func TestGenSatisfiesTheWorldRules(t *testing.T) {
	fams := worldFamilies()
	short := slices.DeleteFunc(slices.Clone(fams), func(f faults.Family) bool { return faults.World.Runs(f, 100) < 100 })
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(short).Draw(t, "family")
		s := faults.Gen(f).Draw(t, "schedule")
		if err := faults.World.CheckWorld(s); err != nil {
			t.Fatalf("%s: %v (to reproduce: go test ./faults -run TestGenSatisfiesTheWorldRules)\n%s", f, err, faults.World.Format(s))
		}
		if r := faults.Renumber(s); !reflect.DeepEqual(r, s) {
			t.Fatalf("%s: renumber changed a schedule in the world (-want +got):\n%s", f, cmp.Diff(s, r))
		}
	})
	// Every family and join by name, a few seeds each: rapid's sampling
	// above may skip one.
	for _, f := range fams {
		for seed := range uint64(8) {
			if err := faults.World.CheckWorld(faults.World.Generate(f, seed)); err != nil {
				t.Fatalf("generate(%s, %d): %v (to reproduce: go test ./faults -run TestGenSatisfiesTheWorldRules)", f, seed, err)
			}
		}
	}
}

// worldHeader starts every hand-built schedule below.
const worldHeader = "nodes 1\nretry 250ms\nmax-attempts 16\n"

func TestCheckWorldNamesTheSettlementAndTheRule(t *testing.T) {
	for _, tc := range []struct {
		name, family, settlements, deliveries string
		rule                                  faults.WorldRule // "" when the schedule is in the world
		id                                    int
		detail                                string // a part of the message
	}{
		{
			// results/counterexamples/four-sig--clean.sched as the first
			// shrinker wrote it: the match between the two was dropped.
			name: "two matches of one room at round 1", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=1
settle s1 player=1 room=1 match=2 round=1 kind=final net=10 final=true seq=2`,
			rule: faults.RuleRounds, id: 1, detail: "want round 2",
		},
		{
			name: "a room change keeps counting", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=2 round=2 kind=instant net=10 final=false seq=2`,
			rule: faults.RuleRounds, id: 1, detail: "restarts the round",
		},
		{
			name: "a first match past round 1", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=3 kind=instant net=10 final=false seq=1`,
			rule: faults.RuleRounds, id: 0, detail: "first match",
		},
		{
			name: "a match in two rooms", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=1 round=1 kind=final net=10 final=true seq=2`,
			rule: faults.RuleMatchPlace, id: 1, detail: "one room",
		},
		{
			name: "two players in one battle", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=2 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s2 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=2`,
		},
		{
			name: "a final that is not final", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=final net=10 final=false seq=1`,
			rule: faults.RuleFinalFlag, id: 0, detail: "final=false",
		},
		{
			name: "an instant that is final", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=true seq=1`,
			rule: faults.RuleFinalFlag, id: 0, detail: "final=true",
		},
		{
			name: "a third may be either", family: "third-kind",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=2
settle s2 player=1 room=1 match=1 round=1 kind=third net=10 final=false seq=3
settle s3 player=1 room=1 match=2 round=2 kind=third net=10 final=true seq=4`,
		},
		{
			name: "a seq gap", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=3`,
			rule: faults.RuleSeq, id: 1, detail: "want seq 2",
		},
		{
			name: "a player starting at seq 8", family: "late",
			settlements: `
settle s0 player=1 room=1 match=4 round=1 kind=final net=-10 final=true seq=8`,
			rule: faults.RuleSeq, id: 0, detail: "want seq 1",
		},
		{
			name: "a rewind outside sequence-rewind", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=2 round=2 kind=instant net=10 final=false seq=1`,
			rule: faults.RuleSeq, id: 1, detail: "want seq 2",
		},
		{
			name: "a rewind in sequence-rewind", family: "duplicate+sequence-rewind",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=2 round=2 kind=instant net=10 final=false seq=1
settle s2 player=1 room=1 match=2 round=2 kind=final net=10 final=true seq=2`,
		},
		{
			name: "a rewind inside a match", family: "sequence-rewind",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=1`,
			rule: faults.RuleSeq, id: 1, detail: "want seq 2",
		},
		{
			name: "a quick return", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=2
settle s2 player=1 room=1 match=3 round=1 kind=instant net=10 final=false seq=3`,
			rule: faults.RuleReturnGap, id: 2, detail: "after 1 match(es) elsewhere",
		},
		{
			name: "a quick return in room-return", family: "crash+room-return",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=2
settle s2 player=1 room=1 match=3 round=1 kind=instant net=10 final=false seq=3`,
		},
		{
			name: "a return after two matches elsewhere", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=2
settle s2 player=1 room=2 match=3 round=2 kind=instant net=10 final=false seq=3
settle s3 player=1 room=1 match=4 round=1 kind=instant net=10 final=false seq=4`,
		},
		{
			name: "late+interleave wants three", family: "late+interleave",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=2 match=2 round=1 kind=instant net=10 final=false seq=2
settle s2 player=1 room=3 match=3 round=1 kind=instant net=10 final=false seq=3
settle s3 player=1 room=1 match=4 round=1 kind=instant net=10 final=false seq=4`,
			rule: faults.RuleReturnGap, id: 3, detail: "at least 3",
		},
		{
			name: "a settlement never sent", family: "clean",
			settlements: `
settle s0 player=1 room=1 match=1 round=1 kind=instant net=10 final=false seq=1
settle s1 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=2`,
			deliveries: "deliver at=0s s0 node=0\n",
			rule:       faults.RuleSent, id: 1, detail: "no delivery sends it",
		},
		{
			name: "players are independent; settlements in any order", family: "clean",
			settlements: `
settle s0 player=2 room=3 match=7 round=1 kind=final net=10 final=true seq=2
settle s1 player=1 room=1 match=2 round=1 kind=instant net=10 final=false seq=1
settle s2 player=2 room=3 match=7 round=1 kind=instant net=10 final=false seq=1
settle s3 player=1 room=1 match=5 round=2 kind=instant net=10 final=false seq=2`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Every settlement is sent once, unless the case says which are.
			dels := tc.deliveries
			if dels == "" {
				for i := range strings.Count(tc.settlements, "settle ") {
					dels += fmt.Sprintf("deliver at=0s s%d node=0\n", i)
				}
			}
			s, err := faults.World.Parse("family " + tc.family + "\n" + worldHeader + strings.TrimLeft(tc.settlements, "\n") + "\n" + dels)
			if err != nil {
				t.Fatalf("Parse: %v (parse accepts schedules outside the world)", err)
			}
			err = faults.World.CheckWorld(s)
			repro := "go test ./faults -run 'TestCheckWorldNamesTheSettlementAndTheRule' -v"
			if tc.rule == "" {
				if err != nil {
					t.Fatalf("CheckWorld: %v, want nil (to reproduce: %s)", err, repro)
				}
				if r := faults.Renumber(s); !reflect.DeepEqual(r, s) {
					t.Fatalf("renumber changed a schedule in the world (to reproduce: %s):\n%s", repro, cmp.Diff(s, r))
				}
				return
			}
			var we *faults.WorldError
			if !errors.As(err, &we) {
				t.Fatalf("checkWorld = %v, want a *WorldError of rule %s (to reproduce: %s)", err, tc.rule, repro)
			}
			if we.Rule != tc.rule || we.Settlement != tc.id || !strings.Contains(we.Error(), tc.detail) {
				t.Fatalf("checkWorld = %q (rule %s, s%d), want rule %s at s%d saying %q (to reproduce: %s)", we, we.Rule, we.Settlement, tc.rule, tc.id, tc.detail, repro)
			}
			if r := faults.Renumber(s); tc.rule == faults.RuleRounds || tc.rule == faults.RuleSeq {
				if err := faults.World.CheckWorld(r); err != nil {
					t.Fatalf("renumber did not repair %s: %v (to reproduce: %s)", tc.rule, err, repro)
				}
			}
		})
	}
}

// TestRenumberRepairsDroppedSettlements is what a shrinker relies on: drop
// any settlements of a generated schedule, renumber, and the only world rule
// that can still fail is the return gap (a dropped match between a room and
// its return).
func TestRenumberRepairsDroppedSettlements(t *testing.T) {
	// Long-history's thousand matches are the same world rules over more
	// matches: the short families cover them in rapid's budget.
	fams := slices.DeleteFunc(worldFamilies(), func(f faults.Family) bool { return faults.World.Runs(f, 100) < 100 })
	rapid.Check(t, func(t *rapid.T) {
		f := rapid.SampledFrom(fams).Draw(t, "family")
		s := faults.Gen(f).Draw(t, "schedule")
		n := len(s.Settlements)
		drop := rapid.SliceOfNDistinct(rapid.IntRange(0, n-1), 0, n-1, rapid.ID[int]).Draw(t, "drop")
		c := s
		c.Settlements = nil
		newID := map[int]int{}
		for i, st := range s.Settlements {
			if !slices.Contains(drop, i) {
				newID[i] = len(c.Settlements)
				st.ID = len(c.Settlements)
				c.Settlements = append(c.Settlements, st)
			}
		}
		// The dropped settlements' deliveries go with them, as in Shrink.
		c.Deliveries, c.Faults = nil, nil
		for _, d := range s.Deliveries {
			if id, ok := newID[d.Msg]; ok {
				d.Msg = id
				c.Deliveries = append(c.Deliveries, d)
			}
		}
		r := faults.Renumber(c)
		err := faults.World.CheckWorld(r)
		var we *faults.WorldError
		if err != nil && (!errors.As(err, &we) || we.Rule != faults.RuleReturnGap) {
			t.Fatalf("%s: after dropping %v and Renumber: %v (to reproduce: go test ./faults -run TestRenumberRepairsDroppedSettlements)\n%s", f, drop, err, faults.World.Format(r))
		}
		for i := range r.Settlements {
			a, b := r.Settlements[i], c.Settlements[i]
			a.Round, a.Seq, b.Round, b.Seq = 0, 0, 0, 0
			if a != b {
				t.Fatalf("renumber changed more than rounds and seq: %+v -> %+v", c.Settlements[i], r.Settlements[i])
			}
		}
	})
}

// TestCheckWorldOnePerKind builds the schedule directly: parse and validate
// already reject a second settlement of one (player, match, kind).
func TestCheckWorldOnePerKind(t *testing.T) {
	st := faults.Settlement{Player: 1, Room: 1, Match: 1, Round: 1, Kind: faults.KindInstant, Net: 10, Seq: 1}
	s := faults.Schedule{Frame: engine.Frame{Family: faults.Families.Clean}, Settlements: []faults.Settlement{st, st}}
	s.Settlements[1].ID, s.Settlements[1].Seq = 1, 2
	var we *faults.WorldError
	if err := faults.World.CheckWorld(s); !errors.As(err, &we) || we.Rule != faults.RuleOnePerKind || we.Settlement != 1 {
		t.Fatalf("checkWorld = %v, want rule %s at s1 (go test ./faults -run TestCheckWorldOnePerKind)", err, faults.RuleOnePerKind)
	}
}

func TestMinReturnGap(t *testing.T) {
	for f, want := range map[faults.Family]int{
		faults.Families.Clean:      2,
		faults.Families.Late:       2,
		faults.Families.Interleave: 2,
		faults.Families.ThirdKind:  2,
		faults.Join(faults.Families.Late, faults.Families.Interleave):                        3,
		faults.Join(faults.Families.Interleave, faults.Families.Crash, faults.Families.Late): 3,
		faults.Families.RoomReturn: 1,
		faults.Join(faults.Families.Late, faults.Families.Interleave, faults.Families.RoomReturn): 1,
	} {
		if got := faults.MinReturnGap(f); got != want {
			t.Errorf("MinReturnGap(%s) = %d, want %d (go test ./faults -run TestMinReturnGap)", f, got, want)
		}
	}
}

// BenchmarkCheckWorld measures one check of a generated schedule (a shrinker
// runs one per candidate, next to a run of the design):
//
//	go test -run='^$' -bench=BenchmarkCheckWorld -benchmem ./faults/
func BenchmarkCheckWorld(b *testing.B) {
	s := faults.World.Generate(faults.Join(faults.Families.ThirdKind, faults.Families.Duplicate), 3)
	if err := faults.World.CheckWorld(s); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = faults.World.CheckWorld(s)
	}
	b.ReportMetric(float64(len(s.Settlements)), "settlements")
}
