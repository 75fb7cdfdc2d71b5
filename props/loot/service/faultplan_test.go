package lootservice

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

const planRepro = "go test ./props/loot/service -count=1 -run 'TestPlan|TestReduce'"

var reachAll = Reach{Net: true, Inventory: true, Process: true}

func workloadOf(t *testing.T, f engine.Family, seed uint64, targets int) Workload {
	t.Helper()
	w, err := Generate(f, seed, "t", 0.2, targets)
	if err != nil {
		t.Fatalf("%v\nTo reproduce: %s", err, planRepro)
	}
	return w
}

// TestPlanIsTheSeedsAndStaysInTheRun: one (family, seed) gives one plan;
// another seed another; every fault starts within the workload's sends
// (or within the longest fault, a SIGSTOP, after them),
// on a target that exists, and a SIGSTOP outlasts the lock ttl.
func TestPlanIsTheSeedsAndStaysInTheRun(t *testing.T) {
	for f := range familyFaults {
		w := workloadOf(t, f, 7, 2)
		a, b := PlanFaults(f, 7, w, 2, reachAll), PlanFaults(f, 7, w, 2, reachAll)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s seed 7 planned twice differs:\n%v\n%v\nTo reproduce: %s", f, a, b, planRepro)
		}
		if c := PlanFaults(f, 8, workloadOf(t, f, 8, 2), 2, reachAll); reflect.DeepEqual(a, c) {
			t.Errorf("%s: seeds 7 and 8 planned the same %v\nTo reproduce: %s", f, a, planRepro)
		}
		if len(a.Faults) != faultsPerKind*len(familyFaults[f]) {
			t.Errorf("%s: %d faults, want %d per kind of %v\nTo reproduce: %s", f, len(a.Faults), faultsPerKind, familyFaults[f], planRepro)
		}
		first, last := w.Sends[0].At, w.Sends[len(w.Sends)-1].At
		for _, x := range a.Faults {
			inv := strings.HasPrefix(string(x.Kind), "inv-")
			if x.At < first || x.At > last+reachAll.Stop() || (inv && x.Target != -1) || (!inv && (x.Target < 0 || x.Target >= 2)) {
				t.Errorf("%s: fault %+v outside sends %v..%v or targets 0..1\nTo reproduce: %s", f, x, first, last, planRepro)
			}
			if x.Kind == ProcStop && x.For <= DefaultLockTTL {
				t.Errorf("%s: SIGSTOP for %v, not past the %v lock ttl\nTo reproduce: %s", f, x.For, DefaultLockTTL, planRepro)
			}
		}
	}
}

// TestPlanOnlyWhatTheHarnessReaches: a part the harness does not reach
// gets no fault, and nothing reached plans nothing.
func TestPlanOnlyWhatTheHarnessReaches(t *testing.T) {
	f := lootfaults.Families.Crash
	w := workloadOf(t, f, 3, 1)
	p := PlanFaults(f, 3, w, 1, Reach{Net: true})
	if len(p.Faults) == 0 || slices.ContainsFunc(p.Faults, func(x Fault) bool { return x.Kind != NetReset }) {
		t.Errorf("crash with only the network reached planned %v, want net-reset only\nTo reproduce: %s", p, planRepro)
	}
	if p := PlanFaults(f, 3, w, 1, Reach{}); len(p.Faults) != 0 {
		t.Errorf("nothing reached planned %v\nTo reproduce: %s", p, planRepro)
	}
}

// TestPlanCoversEveryFamily: every loot family either runs without faults
// (Families, the campaign's default list), or has faults mapped, or is
// named in unplanned with the reason.
func TestPlanCoversEveryFamily(t *testing.T) {
	for _, f := range lootfaults.World.Families {
		_, why := unplanned[f]
		if _, ok := familyFaults[f]; !ok && !why && !slices.Contains(Families, f) {
			t.Errorf("family %s has no faults mapped and is not in Families\nTo reproduce: %s", f, planRepro)
		}
	}
}

// flaky is a fake service: a rerun fails NoDupGrant when request need is
// sent and an inventory timeout is planned, on every other call only.
type flaky struct {
	need  int
	calls int
}

func (fk *flaky) rerun(_ context.Context, r Record) (Record, []Finding, error) {
	fk.calls++
	bad := !slices.Contains(r.Run.Drop, fk.need) &&
		slices.ContainsFunc(r.Run.Faults.Faults, func(x Fault) bool { return x.Kind == InvTimeout }) && fk.calls%2 == 0
	v := Held
	if bad {
		v = Failed
	}
	return r, []Finding{{Property: lootfaults.Properties.NoDupGrant, Verdict: v}}, nil
}

func failingRecord(t *testing.T) (Record, Workload) {
	t.Helper()
	f := lootfaults.Families.TimeoutSuccess
	w := workloadOf(t, f, 5, 1)
	r := Record{Run: header(w, string(f), 5, []Target{{}}, DefaultSpec(), time.Time{})}
	r.Run.Faults = PlanFaults(f, 5, w, 1, reachAll)
	return r, w
}

// TestReduceKeepsOnlyWhatTheFailureNeeds: against a service that fails
// one run in two, reduction drops every other session and send and every
// fault but one inventory timeout, and counts the final reruns.
func TestReduceKeepsOnlyWhatTheFailureNeeds(t *testing.T) {
	r, w := failingRecord(t)
	fk := &flaky{need: w.Sends[len(w.Sends)/2].Request}
	red, err := Reduce(context.Background(), r, lootfaults.Properties.NoDupGrant, fk.rerun, ReduceOptions{Budget: 1000})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(red)
	sent := 0
	for _, snd := range w.Sends {
		if i := snd.Request; !slices.Contains(red.Record.Run.Drop, i) {
			sent++
			if i != fk.need {
				t.Errorf("request %d still sent, only %d is needed\nTo reproduce: %s", i, fk.need, planRepro)
			}
		}
	}
	if fs := red.Record.Run.Faults.Faults; len(fs) != 1 || fs[0].Kind != InvTimeout {
		t.Errorf("faults left %v, want one %s\nTo reproduce: %s", fs, InvTimeout, planRepro)
	}
	if sent != 1 || red.OutOfBudget || red.Of != 3 || red.Reproduced < 1 || red.Sessions+red.Sends == 0 {
		t.Errorf("%s: %d requests sent; want 1, in budget, reproduced in >= 1 of 3\nTo reproduce: %s", red, sent, planRepro)
	}
	if !strings.Contains(red.String(), "reproduced in") {
		t.Errorf("report %q does not say how often it reproduced\nTo reproduce: %s", red, planRepro)
	}
}

// TestReduceStopsAtItsBudget: a budget smaller than the candidates stops
// the reduction, keeps the final repeats, and says so.
func TestReduceStopsAtItsBudget(t *testing.T) {
	r, w := failingRecord(t)
	fk := &flaky{need: w.Sends[0].Request}
	red, err := Reduce(context.Background(), r, lootfaults.Properties.NoDupGrant, fk.rerun, ReduceOptions{Repeat: 2, Budget: 6})
	if err != nil {
		t.Fatal(err)
	}
	if !red.OutOfBudget || red.Reruns != 6 || fk.calls != 6 || !strings.Contains(red.String(), "budget ran out") {
		t.Errorf("%s after %d calls; want the budget of 6 spent and said\nTo reproduce: %s", red, fk.calls, planRepro)
	}
}

// TestRecordKeepsItsPlanAndFaults: the plan, the drops and the applied
// faults read back as written.
func TestRecordKeepsItsPlanAndFaults(t *testing.T) {
	r, _ := failingRecord(t)
	r.Run.Drop = []int{1, 2}
	r.Faults = []AppliedFault{{At: time.Second, Fault: 0, Target: -1, Kind: InvTimeout, Step: "start", Result: "x"}}
	var b strings.Builder
	if err := r.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRecord("r", strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Run.Faults, r.Run.Faults) || !reflect.DeepEqual(got.Faults, r.Faults) || !reflect.DeepEqual(got.Run.Drop, r.Run.Drop) {
		t.Errorf("read back %+v %+v %v, wrote %+v %+v %v\nTo reproduce: %s", got.Run.Faults, got.Faults, got.Run.Drop, r.Run.Faults, r.Faults, r.Run.Drop, planRepro)
	}
}

// TestFaultsThatClashAreAGapApart: in the plans of every family (seeds
// 1..60 on 1..3 targets, every part reached), a fault starts at least
// faultGap after every earlier one it clashes with ends (the hosted
// inventory's faults, any two of one kind on one target, a partition and
// a stall with any network fault on their target, two on one
// dependency), and some were moved there: pairs exactly faultGap apart,
// among the network's and the inventory's faults both.
func TestFaultsThatClashAreAGapApart(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestFaultsThatClashAreAGapApart"
	r := reachAll
	r.Deps = []string{"db", "redis"}
	moved := map[string]int{}
	for f := range familyFaults {
		for seed := uint64(1); seed <= 60; seed++ {
			for n := 1; n <= 3; n++ {
				fs := PlanFaults(f, seed, workloadOf(t, f, seed, n), n, r).Faults
				for j, b := range fs {
					for _, a := range fs[:j] {
						if !clash(a, b) {
							continue
						}
						switch end := a.At + a.For; {
						case b.At < end+faultGap:
							t.Errorf("%s seed %d on %d: %+v starts %v after %+v ends, want %v or more\nTo reproduce: %s", f, seed, n, b, b.At-end, a, faultGap, repro)
						case b.At == end+faultGap:
							moved[strings.SplitN(string(b.Kind), "-", 2)[0]]++
						}
					}
				}
			}
		}
	}
	t.Logf("pairs moved a gap apart, by part: %v", moved)
	for _, part := range []string{"net", "inv"} {
		if moved[part] == 0 {
			t.Errorf("no %s fault was moved a gap after one it clashes with (%v): the plans never met the rule\nTo reproduce: %s", part, moved, repro)
		}
	}
}

// TestNetworkFaultsClashByWhatTheProxyHolds: on one target, a partition
// or a stall clashes with any network fault, and latency, a reset and a
// cut reply (toxics of their own) do not clash with each other; on two
// targets nothing network clashes; apart moves only the clashing.
func TestNetworkFaultsClashByWhatTheProxyHolds(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestNetworkFaultsClashByWhatTheProxyHolds"
	net := []FaultKind{NetLatency, NetStall, NetReset, NetCutReply, NetPartition}
	for _, a := range net {
		for _, b := range net {
			want := a == b || a == NetPartition || b == NetPartition || a == NetStall || b == NetStall
			x, y := Fault{Kind: a, Target: 0}, Fault{Kind: b, Target: 0}
			if got := clash(x, y); got != want {
				t.Errorf("%s and %s on one target: clash %v, want %v\nTo reproduce: %s", a, b, got, want, repro)
			}
			y.Target = 1
			if clash(x, y) {
				t.Errorf("%s on target 0 and %s on target 1 clash\nTo reproduce: %s", a, b, repro)
			}
			p := apart(FaultPlan{Faults: []Fault{{At: 0, For: time.Second, Kind: a}, {At: time.Second / 2, For: time.Second, Kind: b}}})
			if wantAt := map[bool]time.Duration{true: time.Second + faultGap, false: time.Second / 2}[want]; p.Faults[1].At != wantAt {
				t.Errorf("%s then %s half a second later on one target: moved to %v, want %v\nTo reproduce: %s", a, b, p.Faults[1].At, wantAt, repro)
			}
		}
	}
}

// TestFaultLengthsFollowTheScale: a planned fault (but a SIGSTOP or a
// Redis stall, which outlast the lock ttl) lasts at least ten of the run's
// retry delays at its scale, and less than 2 s unless that lower bound
// passes it, when it lasts the bound: at 0.05 some last under the 0.5 s
// the default scale's bound is, at 1.0 every one lasts 2.5 s.
func TestFaultLengthsFollowTheScale(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestFaultLengthsFollowTheScale"
	r := reachAll
	r.Deps = []string{"db", "redis"}
	for _, scale := range []float64{0.05, 0.2, 1.0} {
		lo := time.Duration(float64(10*usualRetry) * scale)
		hi := max(2*time.Second, lo)
		under := 0 // faults shorter than the default scale's 0.5 s
		for f := range familyFaults {
			for seed := uint64(1); seed <= 20; seed++ {
				w, err := Generate(f, seed, "t", scale, 2)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range PlanFaults(f, seed, w, 2, r).Faults {
					if x.Kind == ProcStop || x.Kind == RedisStall {
						continue
					}
					if x.For < lo || (x.For >= hi && x.For != lo) {
						t.Errorf("scale %v: %s seed %d: %s lasts %v, want %v..%v (or %v when that is empty)\nTo reproduce: %s", scale, f, seed, x.Kind, x.For, lo, hi, lo, repro)
					}
					if x.For < 500*time.Millisecond {
						under++
					}
				}
			}
		}
		if scale < 0.2 && under == 0 {
			t.Errorf("scale %v: no fault shorter than 0.5 s, though the lower bound is %v\nTo reproduce: %s", scale, lo, repro)
		}
	}
}
