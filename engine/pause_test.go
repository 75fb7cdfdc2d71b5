package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tape is a System whose nodes make two effects per message, "a" and "b",
// and record, in one shared log, which node did what at what virtual time.
// The log has a lock because a free-running group (RunOptions.Free) calls
// two nodes' effects at once, as a real cluster's would.
type tape struct {
	mu  sync.Mutex
	log []string
}

func (t *tape) NewNode(id int, p *Port[struct{}]) Node { return &tapeNode{t, p} }

type tapeNode struct {
	t *tape
	p *Port[struct{}]
}

func (n *tapeNode) Deliver(now time.Time, msg int) (Ack, error) {
	for _, op := range []string{"a", "b"} {
		if err := n.p.Effect(op, func() error {
			n.t.mu.Lock()
			defer n.t.mu.Unlock()
			n.t.log = append(n.t.log, fmt.Sprintf("m%d:%s@%s/n%d", msg, op, n.p.At(), n.p.Node()))
			return nil
		}); err != nil {
			return Nack, err
		}
	}
	return 1, nil
}

func frame(nodes int, faults []Fault, ds ...Delivery) Frame {
	return Frame{Family: "test", Nodes: nodes, RetryAfter: time.Second, MaxAttempts: 4, Deliveries: ds, Faults: faults}
}

var two = Messages{N: 2, Letter: "m", Noun: "message"}

func TestPauseLetsTheWorldGoOnAndResumesLate(t *testing.T) {
	sys := &tape{}
	f := frame(2, []Fault{{Attempt: 0, Effect: 1, Kind: Pause, For: 5 * time.Second}},
		Delivery{At: 0, Msg: 0, Node: 0}, Delivery{At: 2 * time.Second, Msg: 1, Node: 1})
	tr := Run[struct{}](sys, f, two, RunOptions{})
	// m0's effect a at 0s, then it stalls 5s: m0's retry (1s, node 1) and
	// m1 (2s) run meanwhile, and m0's b comes at 5s.
	want := "m0:a@0s/n0 m0:a@1s/n1 m0:b@1s/n1 m1:a@2s/n1 m1:b@2s/n1 m0:b@5s/n0"
	if got := strings.Join(sys.log, " "); got != want {
		t.Fatalf("log\n got %s\nwant %s", got, want)
	}
	var pauses, acks int
	for _, e := range tr.Events {
		switch e.Kind {
		case EvPause:
			pauses++
		case EvAck:
			acks++
		}
	}
	if pauses != 1 || acks != 3 {
		t.Fatalf("%d pauses and %d acks, want 1 and 3 (the paused attempt answers late)", pauses, acks)
	}
}

func TestPausedCallDiesWithItsNode(t *testing.T) {
	sys := &tape{}
	// m0 pauses on node 0; m1 crashes node 0 meanwhile: m0's b never runs.
	f := frame(1, []Fault{
		{Attempt: 0, Effect: 1, Kind: Pause, For: 5 * time.Second},
		{Attempt: 1, Effect: 0, Kind: CrashBefore},
	}, Delivery{At: 0, Msg: 0, Node: 0}, Delivery{At: time.Second / 2, Msg: 1, Node: 0})
	tr := Run[struct{}](sys, f, two, RunOptions{})
	killed := false
	for _, e := range tr.Events {
		if e.Kind == EvCrash && e.Op == OpPaused && e.Attempt == 0 {
			killed = true
		}
	}
	if !killed {
		t.Fatalf("no EvCrash %q for the paused attempt 0", OpPaused)
	}
	for _, l := range sys.log {
		if strings.HasPrefix(l, "m0:b@5s") {
			t.Fatalf("the paused call ran on after its node died: %v", sys.log)
		}
	}
}

func TestBudgetStopsPausedCalls(t *testing.T) {
	sys := &tape{}
	f := frame(1, []Fault{{Attempt: 0, Effect: 1, Kind: Pause, For: time.Minute}}, Delivery{At: 0, Msg: 0, Node: 0})
	tr := Run[struct{}](sys, f, Messages{N: 1, Letter: "m", Noun: "message"}, RunOptions{MaxEvents: 4})
	if !tr.Exhausted {
		t.Fatal("the run did not run out of its 4-event budget")
	}
}

func TestValidateFrameKeepsPausesInAttempts(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Fault{Attempt: Recovery(0), Kind: Pause, For: time.Second}, "pauses a Recover"},
		{Fault{Attempt: 0, Kind: Pause}, "pauses for 0s"},
		{Fault{Attempt: 0, Kind: Pause, For: 2 * MaxPause}, "MaxPause"},
		{Fault{Attempt: 0, Kind: FailBefore, For: time.Second}, "only a pause has one"},
	} {
		err := ValidateFrame(frame(1, []Fault{c.f}, Delivery{}), Messages{N: 1, Letter: "m", Noun: "message"})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ValidateFrame(%+v) = %v, want an error with %q", c.f, err, c.want)
		}
	}
}

func TestKeepDeliveriesKeepsFaultsOnTheirDeliveries(t *testing.T) {
	f := frame(1, []Fault{
		{Attempt: 0, Effect: 1, Kind: CrashAfter},
		{Attempt: 1, Effect: 0, Kind: FailBefore, OnDelivery: true},
		{Attempt: 3, Effect: 2, Kind: TimeoutAfter, OnDelivery: true},
	}, Delivery{Msg: 0}, Delivery{Msg: 1}, Delivery{Msg: 2}, Delivery{Msg: 3})
	got := KeepDeliveries(f, func(d int) bool { return d != 1 && d != 2 })
	want := []Fault{{Attempt: 0, Effect: 1, Kind: CrashAfter}, {Attempt: 1, Effect: 2, Kind: TimeoutAfter, OnDelivery: true}}
	if len(got.Deliveries) != 2 || got.Deliveries[1].Msg != 3 || !slices.Equal(got.Faults, want) {
		t.Fatalf("KeepDeliveries dropping 1 and 2: deliveries %v, faults %v; want messages 0 and 3, faults %v", got.Deliveries, got.Faults, want)
	}
}
