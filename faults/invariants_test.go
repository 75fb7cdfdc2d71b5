package faults_test

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// checkShape checks what every history of the deterministic runner is:
// Seq is the index, At never goes back, attempts are numbered 0, 1, 2, ...
// in arrival order, every attempt's events sit between its EvArrive and its
// one terminal event (ack, crash or panic), attempts do not overlap (in a
// concurrent schedule: not on one node; in a schedule with a pause: only
// with a paused one, and a node with a paused call runs no other: it
// answers a nack with no env call), and no settlement is sent more than
// its planned arrivals plus MaxAttempts times per phase: the main phase
// and each drain pass, of which there is one, or with outages one more
// per call an outage fails (engine's drainPasses: 1 + the outages'
// calls, the settlement world draining once).
func checkShape(h faults.History) error {
	// open: lane -> attempt whose terminal event is pending, a lane being
	// a node, or with pauses the attempt itself (nodeOf says its node).
	open := map[int]int{}
	pauses := h.Schedule.HasPause()
	nodeOf, frozen := map[int]int{}, map[int]bool{}
	lane := func(e faults.Event) int {
		if pauses {
			return e.Attempt
		}
		return e.Node
	}
	nextAttempt := 0
	sends := map[int]int{}
	planned := map[int]int{}
	for _, d := range h.Schedule.Deliveries {
		planned[d.Msg]++
	}
	phases := 2 // the main phase and the drain
	for _, o := range h.Schedule.Outages {
		phases += o.Calls
	}
	var prev time.Duration
	for i, e := range h.Events {
		if e.Seq != i {
			return fmt.Errorf("event %d has Seq %d", i, e.Seq)
		}
		if e.At < prev {
			return fmt.Errorf("event %d (%s) at %s is before %s", i, e.Kind, e.At, prev)
		}
		prev = e.At
		switch e.Kind {
		case engine.EvArrive:
			if pauses {
				for a, n := range nodeOf {
					frozen[e.Attempt] = frozen[e.Attempt] || n == e.Node && a != e.Attempt
				}
			} else if a, ok := open[e.Node]; ok || (!h.Schedule.Concurrent && len(open) > 0) {
				return fmt.Errorf("event %d: attempt %d arrives while attempt %d has no terminal event (open %v)", i, e.Attempt, a, open)
			}
			if e.Attempt != nextAttempt {
				return fmt.Errorf("event %d: attempt %d, want %d", i, e.Attempt, nextAttempt)
			}
			nextAttempt++
			open[lane(e)] = e.Attempt
			nodeOf[e.Attempt] = e.Node
			sends[e.Msg]++
			if limit := phases*h.Schedule.MaxAttempts + planned[e.Msg]; sends[e.Msg] > limit {
				return fmt.Errorf("s%d sent %d times, over MaxAttempts in each of %d phases plus its %d planned arrivals", e.Msg, sends[e.Msg], phases, planned[e.Msg])
			}
		case engine.EvAck, engine.EvCrash, engine.EvPanic:
			if e.Kind != engine.EvAck {
				// The node is rebuilt: a call paused on it died with the
				// old process, and the new one is not frozen.
				for a, n := range nodeOf {
					if n == e.Node && a != e.Attempt {
						delete(nodeOf, a)
					}
				}
			}
			if e.Attempt >= 0 {
				if a, ok := open[lane(e)]; !ok || e.Attempt != a {
					return fmt.Errorf("event %d: terminal %s of attempt %d, open is %v", i, e.Kind, e.Attempt, open)
				}
				if frozen[e.Attempt] && (e.Kind != engine.EvAck || e.Ack != faults.Nack) {
					return fmt.Errorf("event %d: attempt %d reached a node with a paused call and ended in %s, want a nack", i, e.Attempt, e.Kind)
				}
				delete(open, lane(e))
				delete(nodeOf, e.Attempt)
			}
		case engine.EvEffect, faults.EvCredit, engine.EvFault:
			if a, ok := open[lane(e)]; e.Attempt >= 0 && (!ok || e.Attempt != a) {
				return fmt.Errorf("event %d: %s of attempt %d outside it (open %v)", i, e.Kind, e.Attempt, open)
			}
			if frozen[e.Attempt] {
				return fmt.Errorf("event %d: attempt %d made an env call on a node with a paused call", i, e.Attempt)
			}
		}
	}
	return nil
}

func TestRunHistoryShape(t *testing.T) {
	designs := []faults.Design{keyed{}, naive{}, flaky{}, stubborn{}}
	for _, f := range faults.World.Families {
		t.Run("family="+string(f), func(t *testing.T) {
			eachSchedule(t, f, func(t fataler, s faults.Schedule, seed uint64) {
				d := designs[seed%uint64(len(designs))]
				h := faults.Run(d, s, faults.RunOptions{})
				if err := checkShape(h); err != nil {
					t.Fatalf("design %s: %v", d.Name(), err)
				}
				if _, ok := d.(flaky); ok {
					exactlyOnce(t, h)
				}
			})
		})
	}
}

func TestRunRetriesRoundRobin(t *testing.T) {
	s := oneSettlement(
		engine.Fault{Attempt: 0, Effect: 0, Kind: engine.FailBefore},
		engine.Fault{Attempt: 1, Effect: 0, Kind: engine.FailBefore},
		engine.Fault{Attempt: 2, Effect: 0, Kind: engine.FailBefore},
	)
	s.Nodes = 3
	s.Deliveries[0].Node = 1
	h := faults.Run(keyed{}, s, faults.RunOptions{})
	var nodes []int
	for _, e := range h.Events {
		if e.Kind == engine.EvArrive {
			nodes = append(nodes, e.Node)
		}
	}
	if fmt.Sprint(nodes) != "[1 2 0 1]" {
		t.Fatalf("arrivals on nodes %v, want [1 2 0 1]", nodes)
	}
}

func TestGenerateIsDeterministic(t *testing.T) {
	for _, f := range append(faults.World.Families[:len(faults.World.Families):len(faults.World.Families)], faults.Join(faults.Families.Late, faults.Families.Crash, faults.Families.MultiNode)) {
		a, b := faults.World.Generate(f, 42), faults.World.Generate(f, 42)
		if faults.World.Format(a) != faults.World.Format(b) {
			t.Fatalf("generate(%s, 42) twice differs", f)
		}
		if err := faults.World.Validate(a); err != nil {
			t.Fatalf("generate(%s, 42): %v", f, err)
		}
		if a.Family != f {
			t.Fatalf("generate(%s, 42).Family = %s", f, a.Family)
		}
	}
}

func TestGenRejectsConcurrentWithFaults(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Gen(concurrent+crash) did not panic")
		}
	}()
	faults.Gen(faults.Join(faults.Families.Concurrent, faults.Families.Crash))
}

// rendezvous records how many Deliver calls overlap: each waits (yielding,
// bounded) for a partner delivery at the same virtual time.
type rendezvous struct {
	mu       sync.Mutex
	inFlight map[time.Time]int
	most     int
}

func (r *rendezvous) Name() string               { return "rendezvous" }
func (r *rendezvous) NewCluster() faults.Cluster { return r }
func (r *rendezvous) NewNode(int, faults.Env) faults.Node {
	return rendezvousNode{r}
}

type rendezvousNode struct{ r *rendezvous }

func (n rendezvousNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	r := n.r
	r.mu.Lock()
	r.inFlight[now]++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inFlight[now]--
		r.mu.Unlock()
	}()
	// Bounded: a sequential runner would never bring a partner; 1e5 yields
	// end the wait then (and the test fails on most == 1).
	for range 100_000 {
		r.mu.Lock()
		c := r.inFlight[now]
		r.most = max(r.most, c)
		r.mu.Unlock()
		if c >= 2 {
			break
		}
		runtime.Gosched()
	}
	return faults.AckCredited, nil
}

func TestRunConcurrentFamilyRunsDeliveriesAtOnce(t *testing.T) {
	r := &rendezvous{inFlight: map[time.Time]int{}}
	// Free: the goroutines run at once (interleaved, the partner could
	// never come while one spins without an env call).
	faults.Run(r, faults.World.Generate(faults.Families.Concurrent, 3), faults.RunOptions{Free: true})
	if r.most < 2 {
		t.Fatalf("at most %d deliveries overlapped, want >= 2 (go test -race ./faults -run TestRunConcurrentFamilyRunsDeliveriesAtOnce)", r.most)
	}
}

// counter is a Bounded design that keeps one entry per arrival and declares
// Recent as its bound: it exceeds the bound as soon as a settlement repeats.
type counter struct{}

func (counter) Name() string                        { return "counter" }
func (counter) NewCluster() faults.Cluster          { return counter{} }
func (counter) NewNode(int, faults.Env) faults.Node { return &counterNode{} }

type counterNode struct{ n int }

func (c *counterNode) Deliver(time.Time, faults.Settlement) (faults.Ack, error) {
	c.n++
	return faults.AckCredited, nil
}
func (c *counterNode) StateSize(time.Time) int      { return c.n }
func (c *counterNode) StateSpan() time.Duration     { return 2500 * time.Millisecond }
func (c *counterNode) StateBound(l faults.Load) int { return l.Recent }

func TestRunSamplesBoundedLoad(t *testing.T) {
	s := oneSettlement()
	s.Settlements = append(s.Settlements,
		faults.Settlement{ID: 1, Player: 1, Room: 2, Match: 2, Kind: faults.KindInstant, Seq: 3},
		faults.Settlement{ID: 2, Player: 2, Room: 2, Match: 3, Kind: faults.KindInstant, Seq: 1})
	s.Nodes = 2
	s.Deliveries = []engine.Delivery{
		{At: 0, Msg: 0},
		{At: time.Second, Msg: 1},
		{At: time.Second, Msg: 1, Node: 1}, // another node: not counted on node 0
		{At: 2 * time.Second, Msg: 0},
		{At: 5 * time.Second, Msg: 2},
	}
	h := faults.Run(counter{}, s, faults.RunOptions{})
	type sample struct {
		Node, Size, Bound int
		Load              faults.Load
	}
	var got []sample
	for _, e := range h.Events {
		if e.Kind == faults.EvState {
			got = append(got, sample{e.Node, e.Detail.Size, e.Detail.Bound, e.Detail.Load})
		}
	}
	span := 2500 * time.Millisecond
	want := []sample{
		{0, 1, 1, faults.Load{Players: 1, Recent: 1, Span: span}},
		{0, 2, 2, faults.Load{Players: 1, Recent: 2, Span: span}},
		{1, 1, 1, faults.Load{Players: 1, Recent: 1, Span: span}},
		// At 2s the span [-0.5s, 2s] holds s0 (twice) and s1: 2 distinct.
		{0, 3, 2, faults.Load{Players: 1, Recent: 2, Span: span}},
		// At 5s the span [2.5s, 5s] holds s2 alone; players so far: 2.
		{0, 4, 1, faults.Load{Players: 2, Recent: 1, Span: span}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("state samples (-want +got):\n%s", diff)
	}
}
