package faults_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// oneSettlement is a schedule of one settlement delivered once at 1s.
func oneSettlement(faultList ...engine.Fault) faults.Schedule {
	return faults.Schedule{
		Frame:       engine.Frame{Family: faults.Families.Clean, Nodes: 1, RetryAfter: 250 * time.Millisecond, MaxAttempts: 8, Deliveries: []engine.Delivery{{At: time.Second}}, Faults: faultList},
		Settlements: []faults.Settlement{{ID: 0, Player: 1, Room: 2, Match: 1, Round: 1, Kind: faults.KindFinal, Net: -10, Final: true, Seq: 1}},
	}
}

// kinds lists the event kinds of h, as "arrive ack ..." for compact asserts.
func kinds(h faults.History) string {
	var b strings.Builder
	for i, e := range h.Events {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(faults.World.KindName(e.Kind))
		if e.Op != "" {
			b.WriteString(":" + e.Op)
		}
	}
	return b.String()
}

// exactlyOnce checks what every design of these tests must give under a
// correct runner: each delivered settlement credited exactly once, nothing
// exhausted.
func exactlyOnce(t interface {
	Helper()
	Fatalf(string, ...any)
}, h faults.History) {
	t.Helper()
	if h.Exhausted {
		t.Fatalf("history exhausted:\n%s", kinds(h))
	}
	delivered := map[int]bool{}
	for _, d := range h.Schedule.Deliveries {
		delivered[d.Msg] = true
	}
	for id := range h.Schedule.Settlements {
		want := 0
		if delivered[id] && (!h.Schedule.GiveUp || h.Reached(id)) {
			want = 1
		}
		if got := h.Credits(id); got != want {
			t.Fatalf("s%d credited %d times, want %d\nschedule:\n%s", id, got, want, faults.World.Format(h.Schedule))
		}
	}
}

func TestRunIsDeterministic(t *testing.T) {
	for _, f := range faults.World.Families {
		t.Run("family="+string(f), func(t *testing.T) {
			// The concurrent family runs goroutines: more runs per
			// schedule, so an order that leaked from the Go scheduler would
			// show (5 runs: the 4 repeats differ from the first with
			// probability at least 1-2^-4 if any choice were a coin flip).
			runs := 2
			if f == faults.Families.Concurrent {
				runs = 5
			}
			eachSchedule(t, f, func(t fataler, s faults.Schedule, _ uint64) {
				a := faults.Run(keyed{}, s, faults.RunOptions{})
				for range runs - 1 {
					b := faults.Run(keyed{}, s, faults.RunOptions{})
					// reflect.DeepEqual first: cmp is slow under -race and
					// only needed to explain a difference.
					if !reflect.DeepEqual(a, b) {
						t.Fatalf("two runs of one schedule differ (-first +second):\n%s", cmp.Diff(a, b))
					}
				}
			})
		})
	}
}

func TestRunCorrectDesignCreditsEverySettlementOnce(t *testing.T) {
	for _, f := range faults.World.Families {
		t.Run("family="+string(f), func(t *testing.T) {
			eachSchedule(t, f, func(t fataler, s faults.Schedule, _ uint64) {
				exactlyOnce(t, faults.Run(keyed{}, s, faults.RunOptions{}))
			})
		})
	}
}

func TestRunNaiveDesignDoubleCreditsADuplicate(t *testing.T) {
	s := oneSettlement()
	s.Deliveries = append(s.Deliveries, engine.Delivery{At: time.Second + time.Millisecond})
	h := faults.Run(naive{}, s, faults.RunOptions{})
	if got := h.Credits(0); got != 2 {
		t.Fatalf("naive credited s0 %d times, want 2: %s", got, kinds(h))
	}
}

func TestRunRetriesUntilAcked(t *testing.T) {
	// Attempts 0, 1 and 2 fail at their claim; attempt 3 succeeds.
	s := oneSettlement(
		engine.Fault{Attempt: 0, Effect: 0, Kind: engine.FailBefore},
		engine.Fault{Attempt: 1, Effect: 0, Kind: engine.FailBefore},
		engine.Fault{Attempt: 2, Effect: 0, Kind: engine.FailBefore},
	)
	h := faults.Run(keyed{}, s, faults.RunOptions{})
	exactlyOnce(t, h)
	var ats []time.Duration
	for _, e := range h.Events {
		if e.Kind == engine.EvArrive {
			ats = append(ats, e.At)
		}
	}
	want := []time.Duration{time.Second, 1250 * time.Millisecond, 1500 * time.Millisecond, 1750 * time.Millisecond}
	if diff := cmp.Diff(want, ats); diff != "" {
		t.Fatalf("arrival times (-want +got):\n%s\n%s", diff, kinds(h))
	}
	if got, want := kinds(h), "arrive fault:claim ack arrive fault:claim ack arrive fault:claim ack arrive effect:claim credit:credit effect:commit ack recover:recover"; got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
}

func TestRunFailBeforeSkipsTheEffect(t *testing.T) {
	h := faults.Run(keyed{}, oneSettlement(engine.Fault{Attempt: 0, Effect: 1, Kind: engine.FailBefore}), faults.RunOptions{})
	exactlyOnce(t, h)
	// The credit of attempt 0 never reached the ledger; attempt 1 credited.
	for _, e := range h.Events {
		if e.Kind == faults.EvCredit && e.Attempt == 0 {
			t.Fatalf("attempt 0 credited despite FailBefore: %s", kinds(h))
		}
		if e.Kind == engine.EvFault && !strings.Contains(e.Err, engine.ErrInjected.Error()) {
			t.Fatalf("fault event error %q does not wrap ErrInjected", e.Err)
		}
	}
}

func TestRunTimeoutAfterAppliesTheEffect(t *testing.T) {
	h := faults.Run(keyed{}, oneSettlement(engine.Fault{Attempt: 0, Effect: 1, Kind: engine.TimeoutAfter}), faults.RunOptions{})
	exactlyOnce(t, h)
	// Attempt 0's credit applied, then timed out; the retry's credit is a
	// no-op in the ledger (same grant).
	var applied []bool
	for _, e := range h.Events {
		if e.Kind == faults.EvCredit {
			applied = append(applied, e.Detail.Applied)
		}
	}
	if diff := cmp.Diff([]bool{true, false}, applied); diff != "" {
		t.Fatalf("credits applied (-want +got):\n%s\n%s", diff, kinds(h))
	}
}

// probe records the errors Env returns to it.
type probe struct{ errs []error }

func (p *probe) Name() string                               { return "probe" }
func (p *probe) NewCluster() faults.Cluster                 { return p }
func (p *probe) NewNode(id int, env faults.Env) faults.Node { return probeNode{p, env} }

type probeNode struct {
	p   *probe
	env faults.Env
}

func (n probeNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	ran := false
	err := n.env.Durable("op", func() error { ran = true; return nil })
	n.p.errs = append(n.p.errs, fmt.Errorf("ran=%t: %w", ran, err))
	return faults.AckCredited, nil
}

func TestEnvErrorsWrapTheirSentinels(t *testing.T) {
	p := &probe{}
	s := oneSettlement(engine.Fault{Attempt: 0, Effect: 0, Kind: engine.FailBefore})
	s.Deliveries = append(s.Deliveries, engine.Delivery{At: 2 * time.Second})
	s.Faults = append(s.Faults, engine.Fault{Attempt: 1, Effect: 0, Kind: engine.TimeoutAfter})
	faults.Run(p, s, faults.RunOptions{})
	if len(p.errs) != 2 || !errors.Is(p.errs[0], engine.ErrInjected) || !strings.HasPrefix(p.errs[0].Error(), "ran=false") ||
		!errors.Is(p.errs[1], engine.ErrTimeout) || !strings.HasPrefix(p.errs[1].Error(), "ran=true") {
		t.Fatalf("env errors = %v, want [ran=false ErrInjected, ran=true ErrTimeout]", p.errs)
	}
}

func TestRunCrashAtEveryPointRebuildsAndRecovers(t *testing.T) {
	// keyed makes 3 effects; effect 3 is past them: the lost ack.
	for effect := range 4 {
		for _, k := range []engine.FaultKind{engine.CrashBefore, engine.CrashAfter} {
			t.Run(fmt.Sprintf("effect=%d/%s", effect, k), func(t *testing.T) {
				s := oneSettlement(engine.Fault{Attempt: 0, Effect: effect, Kind: k})
				d := keyed{}
				h := faults.Run(d, s, faults.RunOptions{})
				exactlyOnce(t, h)
				var crash, recovered, nodes int
				for _, e := range h.Events {
					switch e.Kind {
					case engine.EvCrash:
						crash++
						if e.Fault != k {
							t.Errorf("crash event fault %s, want %s", e.Fault, k)
						}
					case engine.EvRecover:
						recovered++
					case engine.EvArrive:
						nodes++
					}
				}
				// One crash; Recover after it and at the drain.
				if crash != 1 || recovered != 2 {
					t.Fatalf("crashes %d recoveries %d, want 1 and 2: %s", crash, recovered, kinds(h))
				}
			})
		}
	}
}

// recordingDesign counts NewNode calls through keyed's cluster.
func TestRunCrashBuildsAFreshNode(t *testing.T) {
	c := &countingDesign{}
	faults.Run(c, oneSettlement(engine.Fault{Attempt: 0, Effect: 0, Kind: engine.CrashBefore}), faults.RunOptions{})
	if c.newNodes != 2 {
		t.Fatalf("NewNode called %d times, want 2 (start, after the crash)", c.newNodes)
	}
}

type countingDesign struct{ newNodes int }

func (c *countingDesign) Name() string               { return "counting" }
func (c *countingDesign) NewCluster() faults.Cluster { return countingCluster{c, keyed{}.NewCluster()} }

type countingCluster struct {
	c     *countingDesign
	inner faults.Cluster
}

func (cc countingCluster) NewNode(id int, env faults.Env) faults.Node {
	cc.c.newNodes++
	return cc.inner.NewNode(id, env)
}

// A design that never acks: the sender sends MaxAttempts times, again
// after the drain, then gives up; that is the end of the world, not of the
// harness's budget, so the run is judged (NoLoss fails it).
func TestRunSenderGivesUpOnADesignThatNeverAcks(t *testing.T) {
	h := faults.Run(stubborn{}, oneSettlement(), faults.RunOptions{})
	if h.Exhausted {
		t.Fatalf("the sender giving up is not the harness's budget running out: %s", kinds(h))
	}
	arrivals := strings.Count(kinds(h), "arrive")
	// MaxAttempts sends, then MaxAttempts more after the drain.
	if want := 2 * 8; arrivals != want {
		t.Fatalf("%d arrivals, want %d", arrivals, want)
	}
	if last := h.Events[len(h.Events)-1]; last.Kind != engine.EvGiveUp || last.Msg != 0 {
		t.Fatalf("last event %+v, want EvGiveUp for s0", last)
	}
	// With GiveUp, no resend at the drain.
	s := oneSettlement()
	s.GiveUp = true
	if h := faults.Run(stubborn{}, s, faults.RunOptions{}); strings.Count(kinds(h), "arrive") != 8 {
		t.Fatalf("give-up sender: %s; want 8 sends and no drain resend", kinds(h))
	}
}

func TestRunBudgetExhaustion(t *testing.T) {

	h := faults.Run(keyed{}, faults.World.Generate(faults.Families.Duplicate, 1), faults.RunOptions{MaxEvents: 10})
	if !h.Exhausted || h.Events[len(h.Events)-1].Kind != engine.EvBudget || len(h.Events) != 11 {
		t.Fatalf("MaxEvents 10: exhausted=%t, %d events: %s", h.Exhausted, len(h.Events), kinds(h))
	}
}

// panicky panics on its first delivery.
type panicky struct{ n *int }

func (p panicky) Name() string                        { return "panicky" }
func (p panicky) NewCluster() faults.Cluster          { return p }
func (p panicky) NewNode(int, faults.Env) faults.Node { return p }
func (p panicky) Deliver(time.Time, faults.Settlement) (faults.Ack, error) {
	*p.n++
	if *p.n == 1 {
		panic("boom")
	}
	return faults.AckCredited, nil
}

func TestRunSurvivesADesignPanic(t *testing.T) {
	n := 0
	h := faults.Run(panicky{&n}, oneSettlement(), faults.RunOptions{})
	if got, want := kinds(h), "arrive panic:deliver recover:rebuild arrive ack"; got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if want := "boom (at faults_test.panicky.Deliver (run_test.go:"; !strings.HasPrefix(h.Events[1].Err, want) {
		t.Fatalf("panic event Err %q, want %s...", h.Events[1].Err, want)
	}
}

func TestRunConcurrentFamilyIsExact(t *testing.T) {
	for seed := range uint64(20) {
		s := faults.World.Generate(faults.Families.Concurrent, seed)
		free := seed%2 == 1 // both modes: interleaved and free-running
		h := faults.Run(keyed{}, s, faults.RunOptions{Free: free})
		exactlyOnce(t, h)
		hn := faults.Run(naive{}, s, faults.RunOptions{Free: free})
		arrivals := 0
		credits := 0
		for _, e := range hn.Events {
			switch e.Kind {
			case engine.EvArrive:
				arrivals++
			case faults.EvCredit:
				credits++
			}
		}
		if arrivals != credits || arrivals <= len(s.Settlements) {
			t.Fatalf("seed %d: naive credited %d of %d arrivals (settlements %d)", seed, credits, arrivals, len(s.Settlements))
		}
	}
}

// looper credits forever inside one Deliver.
type looper struct{}

func (looper) Name() string                               { return "looper" }
func (looper) NewCluster() faults.Cluster                 { return looper{} }
func (looper) NewNode(id int, env faults.Env) faults.Node { return looperNode{env} }

type looperNode struct{ env faults.Env }

func (n looperNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	for {
		n.env.Credit("", s, s.Room)
	}
}

func TestRunStopsADesignLoopingThroughEnv(t *testing.T) {
	h := faults.Run(looper{}, oneSettlement(), faults.RunOptions{MaxEvents: 100})
	last := h.Events[len(h.Events)-1]
	if !h.Exhausted || last.Kind != engine.EvBudget || len(h.Events) != 101 {
		t.Fatalf("exhausted=%t, %d events, last %s", h.Exhausted, len(h.Events), last.Kind)
	}
}

// A crash inside Recover kills the node mid-recovery: the runner rebuilds
// it and the new node recovers again (the next recovery call), so what the
// first left half done is finished, once.
func TestRunCrashInsideRecoverRebuildsAndRecoversAgain(t *testing.T) {
	s := oneSettlement()
	// The delivery crashes right after its claim: a claimed, uncredited
	// record, left for Recover. The sender gives up: only Recover can
	// finish. Recovery call 0 (the rebuilt node's, while the crash is
	// fresh) completes it; make it crash after the credit.
	s.GiveUp, s.MaxAttempts = true, 1
	s.Faults = []engine.Fault{
		{Attempt: engine.Recovery(0), Effect: 0, Kind: engine.CrashAfter},
		{Attempt: 0, Effect: 0, Kind: engine.CrashAfter},
	}
	if err := faults.World.Validate(s); err != nil {
		t.Fatal(err)
	}
	h := faults.Run(keyed{}, s, faults.RunOptions{})
	got := kinds(h)
	want := "arrive effect:claim crash:claim credit:credit crash:credit credit:credit effect:commit recover:recover recover:recover give-up"
	if got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	exactlyOnce(t, h)
	text := faults.World.Format(s)
	if !strings.Contains(text, "fault recover=0 effect=0 crash-after\n") || !strings.Contains(text, "give-up true\n") {
		t.Fatalf("the text form lacks the recover fault or give-up:\n%s", text)
	}
	back, err := faults.World.Parse(text)
	if err != nil || !reflect.DeepEqual(back, s) {
		t.Fatalf("parse(format(s)) = %+v, %v; want %+v", back, err, s)
	}
}
