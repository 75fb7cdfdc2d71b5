package engine_test

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// pair is i0 and its copy at one instant on two nodes, concurrent (more
// lines may follow: directives come in any order but for deliveries).
var pair = toyHeader(famConcurrent, 2) + `concurrent true
inc i0 amount=1
deliver at=0s i0 node=0
deliver at=0s i0 node=1
`

// ledgerOps projects a history onto its ledger calls: "r0" is node 0's
// check, "a1" node 1's apply.
func ledgerOps(h toyHistory) string {
	var ops []string
	for _, e := range h.Events {
		switch e.Kind {
		case evRead:
			ops = append(ops, "r"+string(rune('0'+e.Node)))
		case evApply:
			ops = append(ops, "a"+string(rune('0'+e.Node)))
		}
	}
	return strings.Join(ops, " ")
}

// racyByHand is the dumb alternative to the interleaver: every merge of
// the two nodes' programs (check, then apply if the check saw nothing),
// with what racy does in it, and whether it adds twice.
func racyByHand() map[string]bool {
	out := map[string]bool{}
	var merge func(prefix []string, a, b []string)
	merge = func(prefix []string, a, b []string) {
		if len(a) == 0 && len(b) == 0 {
			var ops []string
			applied, seen := 0, map[byte]bool{}
			for _, op := range prefix {
				node := op[1]
				if op[0] == 'r' {
					seen[node] = applied > 0
					ops = append(ops, op)
				} else if !seen[node] {
					applied++
					ops = append(ops, op)
				}
			}
			out[strings.Join(ops, " ")] = applied > 1
			return
		}
		if len(a) > 0 {
			merge(append(slices.Clone(prefix), a[0]), a[1:], b)
		}
		if len(b) > 0 {
			merge(append(slices.Clone(prefix), b[0]), a, b[1:])
		}
	}
	merge(nil, []string{"r0", "a0"}, []string{"r1", "a1"})
	return out
}

// Interleavings walks every leaf of the scheduler's tree once: each with
// its own switches and its own history, together every order of the two
// nodes' ledger calls that the dumb alternative lists (6 merges of two
// two-step programs, 4 of them both checks before either apply), each
// judged as the alternative says.
func TestToyInterleavingsAgreeWithEveryMergeByHand(t *testing.T) {
	const repro = "go test -run '^TestToyInterleavingsAgreeWithEveryMergeByHand$' ./engine"
	want := racyByHand()
	if len(want) != 6 {
		t.Fatalf("the alternative lists %d merges, want 6 (4 choose 2)", len(want))
	}
	got := map[string]bool{}
	var switches []string
	var histories [][]toyEvent
	run := func(s toySched, o engine.RunOptions) toyHistory { return toyRun(racy{}, s, o) }
	for s, h := range engine.Interleavings(mustParse(t, pair), toyWorld.Frame, run, engine.RunOptions{}) {
		sw := fmtInts(s.Switches)
		if slices.Contains(switches, sw) {
			t.Errorf("switches [%s] yielded twice (%s)", sw, repro)
		}
		switches = append(switches, sw)
		for _, prev := range histories {
			if reflect.DeepEqual(prev, h.Events) {
				t.Errorf("switches [%s] repeat an earlier leaf's history (%s)", sw, repro)
			}
		}
		histories = append(histories, h.Events)
		ops := ledgerOps(h)
		dup := toyJudge(h).Outcome(noDup) == engine.Fails
		if wantDup, ok := want[ops]; !ok || wantDup != dup {
			t.Errorf("switches [%s]: ledger calls %q, NoDup fails: %v; the alternative says %v (listed: %v) (%s)", sw, ops, dup, wantDup, ok, repro)
		}
		got[ops] = dup
		// Each leaf replays: its switches are the whole interleaving.
		if again := toyRun(racy{}, s, engine.RunOptions{}); !reflect.DeepEqual(again.Events, h.Events) {
			t.Errorf("switches [%s] do not replay their leaf (%s)", sw, repro)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the interleavings reached %v, the alternative lists %v (%s)", got, want, repro)
	}
	fails := 0
	for _, dup := range want {
		if dup {
			fails++
		}
	}
	if fails != 4 {
		t.Errorf("%d merges add twice, want 4 (both checks before either apply: 2 orders of the checks x 2 of the applies)", fails)
	}
}

// Stopping the walk early stops it.
func TestToyInterleavingsStopWhenAsked(t *testing.T) {
	n := 0
	run := func(s toySched, o engine.RunOptions) toyHistory { return toyRun(racy{}, s, o) }
	for range engine.Interleavings(mustParse(t, pair), toyWorld.Frame, run, engine.RunOptions{}) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Errorf("the walk went on to %d leaves after the loop broke at 2", n)
	}
}

// Free goroutines may miss a failure but never report a false one: keyed
// holds on every concurrent schedule; racy's only possible failure is
// NoDup. Under -race this is also the race detector's look at the free
// runner.
func TestToyFreeRunsReportNoFalseFailure(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		s := toyGenerate(famConcurrent, seed)
		if r := toyJudge(toyRun(keyed{}, s, engine.RunOptions{Free: true})); len(r.Failed()) > 0 {
			t.Errorf("keyed under Free, seed %d: %s (toyGenerate(%q, %d))", seed, r, famConcurrent, seed)
		}
		if r := toyJudge(toyRun(racy{}, s, engine.RunOptions{Free: true})); slices.ContainsFunc(r.Failed(), func(p engine.Property) bool { return p != noDup }) {
			t.Errorf("racy under Free, seed %d: %s (toyGenerate(%q, %d))", seed, r, famConcurrent, seed)
		}
	}
}

// seven is one +7 after a +1: hangs blocks on the +7.
var seven = toyHeader(famDup, 1) + `inc i0 amount=1
inc i1 amount=7
deliver at=0s i0 node=0
deliver at=100ms i1 node=0
`

// The watchdog ends a run whose design blocks: the history so far and an
// EvStall, Responsive failing on the attempt that never returned, the
// safety properties unknown, and the system not closed (its run is not
// over).
func TestToyWatchdogEndsABlockedRun(t *testing.T) {
	const repro = "go test -run '^TestToyWatchdogEndsABlockedRun$' ./engine"
	d := hangs{release: make(chan struct{})}
	t.Cleanup(func() { close(d.release) }) // the abandoned goroutine then stops at its next env call
	toyClosed.mu.Lock()
	closed := toyClosed.n
	toyClosed.mu.Unlock()
	stall := 200 * time.Millisecond
	start := time.Now()
	// i0's attempt crashes first: an attempt that ended in a crash is not
	// one that never returned.
	h := toyRun(d, mustParse(t, seven+"fault attempt=0 effect=0 crash-before\n"), engine.RunOptions{Stall: stall})
	took := time.Since(start)
	if !h.Stalled || len(h.Events) == 0 || h.Events[len(h.Events)-1].Kind != engine.EvStall {
		t.Fatalf("not a stalled history ending in EvStall (%s):\n%s", repro, engine.Timeline(toyWorld, h, toyJudge(h)))
	}
	// Within Stall + a watchdog tick (20ms), not the DefaultStall of 5s;
	// twice the stall leaves 180ms for a loaded machine and still catches
	// a watchdog that waits for several stalls. (That it waits at least
	// Stall is TestToyWatchdogWaitsItsWholeStall's.)
	if took >= 2*stall {
		t.Errorf("the run took %v to be given up with a stall of %v (%s)", took, stall, repro)
	}
	r := toyJudge(h)
	v, _ := r.Verdict(responsive)
	if v.Outcome != engine.Fails || !strings.Contains(v.String(), "the run stalled: attempt 1 of i1 on node 0 never returned") {
		t.Errorf("Responsive: %s; want it to fail naming attempt 1 of i1 (%s)", v, repro)
	}
	if r.Outcome(noDup) != engine.Unknown || r.Outcome(noLoss) != engine.Unknown {
		t.Errorf("a stalled run proves no safety property: %s (%s)", r, repro)
	}
	toyClosed.mu.Lock()
	defer toyClosed.mu.Unlock()
	if toyClosed.n != closed {
		t.Errorf("a stalled run's system was closed (%s)", repro)
	}
}

// The watchdog gives up no sooner than Stall after the run's last
// progress, as its doc says, even on a loaded machine.
func TestToyWatchdogWaitsItsWholeStall(t *testing.T) {
	// Failed under load (161ms and 194ms into a 200ms stall) while
	// watchLoop judged stalls by the ticker's time, which is stale when the
	// loop reads a tick late: a run registered after the tick fired was
	// stamped before it started.
	d := hangs{release: make(chan struct{})}
	t.Cleanup(func() { close(d.release) })
	const stall = 200 * time.Millisecond
	for i := range 10 {
		start := time.Now()
		toyRun(d, mustParse(t, seven), engine.RunOptions{Stall: stall})
		if took := time.Since(start); took < stall {
			t.Fatalf("run %d was given up after %v, within its stall of %v (go test -run '^TestToyWatchdogWaitsItsWholeStall$' ./engine)", i, took, stall)
		}
	}
}

// A cell stops at its first blocked run, and keeps it unshrunk (every
// candidate would cost a whole stall).
func TestToyCellStopsAtTheFirstBlockedRun(t *testing.T) {
	const repro = "go test -run '^TestToyCellStopsAtTheFirstBlockedRun$' ./engine"
	d := hangs{release: make(chan struct{})}
	t.Cleanup(func() { close(d.release) })
	// The dumb alternative: the first seed whose schedule has a +7.
	first := uint64(0)
	for k := uint64(1); first == 0; k++ {
		if slices.ContainsFunc(toyGenerate(famDup, k).Incs, func(x toyInc) bool { return x.Amount == 7 }) {
			first = k
		}
	}
	c := engine.RunCell(toyWorld, toyDesign(d), famDup, engine.MatrixOptions[toyDesign]{N: 40, Run: engine.RunOptions{Stall: 50 * time.Millisecond}})
	if c.Runs != int(first) || !slices.Contains(c.Failed, responsive) || c.Unknown == 0 {
		t.Errorf("cell: %d runs (want %d, the first with a +7), fails %v, %d unknown (%s)", c.Runs, first, c.Failed, c.Unknown, repro)
	}
	if len(c.Counterexamples) != 1 || !reflect.DeepEqual(c.Counterexamples[0].Schedule, toyGenerate(famDup, first)) {
		t.Errorf("want the blocked run kept as found (seed %d), got %d counterexamples (%s)", first, len(c.Counterexamples), repro)
	}
}

// slow sleeps between its effects: never longer than the stall at once,
// much longer in all. The watchdog looks at progress, not at the total.
type slow struct{ gap time.Duration }

func (slow) Name() string                          { return "slow" }
func (d slow) NewNode(_ int, e toyEnv) engine.Node { return slowNode{e, d.gap} }

type slowNode struct {
	e   toyEnv
	gap time.Duration
}

func (n slowNode) Deliver(_ time.Time, m int) (engine.Ack, error) {
	for range 4 {
		time.Sleep(n.gap)
		if err := n.e.Store("step", func(*toyStore) error { return nil }); err != nil {
			return engine.Nack, err
		}
	}
	return answer(n.e.Apply(m, keyOf(m)))
}

func TestToyWatchdogSparesASlowRunThatMoves(t *testing.T) {
	// Two increments of 4 steps of 50ms: 400ms in all, against a stall of
	// 300ms, which no single 50ms gap comes near.
	s := mustParse(t, seven)
	h := toyRun(slow{gap: 50 * time.Millisecond}, s, engine.RunOptions{Stall: 300 * time.Millisecond})
	if h.Stalled {
		t.Errorf("the watchdog gave up on a run that moved every 50ms (go test -run '^TestToyWatchdogSparesASlowRunThatMoves$' ./engine):\n%s", engine.Timeline(toyWorld, h, toyJudge(h)))
	}
}

// Run closes each system once, after its last event.
func TestToyRunClosesItsSystemOnce(t *testing.T) {
	toyClosed.mu.Lock()
	before := toyClosed.n
	toyClosed.mu.Unlock()
	for seed := uint64(1); seed <= 5; seed++ {
		toyRun(journal{}, toyGenerate(famCrash, seed), engine.RunOptions{})
	}
	toyClosed.mu.Lock()
	defer toyClosed.mu.Unlock()
	if got := toyClosed.n - before; got != 5 {
		t.Errorf("5 runs closed their systems %d times (go test -run '^TestToyRunClosesItsSystemOnce$' ./engine)", got)
	}
}

// Run refuses a frame ValidateFrame rejects, loudly.
func TestToyRunPanicsOnAnInvalidFrame(t *testing.T) {
	defer func() {
		if v := recover(); v == nil || !strings.Contains(v.(string), "invalid schedule") {
			t.Errorf("engine.Run on 0 nodes: recovered %v, want an invalid-schedule panic", v)
		}
	}()
	s := mustParse(t, seven)
	s.Nodes = 0
	engine.Run[toyDetail](&toySystem{d: keyed{}, s: s}, s.Frame, toyMessages(s), engine.RunOptions{})
}

func fmtInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, " ")
}
