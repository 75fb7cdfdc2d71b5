package engine

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// leaseSys is a System of one message whose nodes defer to a live lease:
// a node claims the message ("claim"), and one that finds another node's
// claim not yet committed nacks; the claimant commits ("commit") and acks.
type leaseSys struct {
	mu        sync.Mutex
	owner     int // the claimant's node, -1 for none
	committed bool
}

func (s *leaseSys) NewNode(id int, p *Port[struct{}]) Node { return leaseNode{s, p, id} }

type leaseNode struct {
	s  *leaseSys
	p  *Port[struct{}]
	id int
}

// errHeld is the nack of a node that found another's live lease.
var errHeld = errors.New("a live owner holds the lease")

func (n leaseNode) Deliver(time.Time, int) (Ack, error) {
	held := false
	if err := n.p.Effect("claim", func() error {
		n.s.mu.Lock()
		defer n.s.mu.Unlock()
		switch {
		case n.s.owner < 0:
			n.s.owner = n.id
		case n.s.owner != n.id && !n.s.committed:
			held = true
		}
		return nil
	}); err != nil {
		return Nack, err
	}
	if held {
		return Nack, errHeld
	}
	if err := n.p.Effect("commit", func() error {
		n.s.mu.Lock()
		defer n.s.mu.Unlock()
		n.s.committed = true
		return nil
	}); err != nil {
		return Nack, err
	}
	return 1, nil
}

// TestRetryOfAnAckedMessageIsNoGroup is issue 26's crash, at the
// engine: one copy of m0 nacks because its sibling on the other node holds
// the lease, the sender queues its retry for RetryAfter later, and the
// sibling is acked meanwhile. The retry is dropped when it falls due and
// was the only send of its instant: that instant is no group at all (no
// attempt, no scheduling choice), where the interleaver used to index an
// empty goroutine list and crash the test binary.
func TestRetryOfAnAckedMessageIsNoGroup(t *testing.T) {
	f := Frame{Family: "test", Nodes: 2, RetryAfter: time.Second, MaxAttempts: 4, Concurrent: true,
		Deliveries: []Delivery{{At: 0, Msg: 0, Node: 0}, {At: 0, Msg: 0, Node: 1}}}
	one := Messages{N: 1, Letter: "m", Noun: "message"}
	run := func(f Frame, o RunOptions) Trace[struct{}] {
		return Run[struct{}](&leaseSys{owner: -1}, f, one, o)
	}
	nacked := 0
	for f, tr := range Interleavings(f, func(f *Frame) *Frame { return f }, run, RunOptions{}) {
		deferred := false
		for _, e := range tr.Events {
			if e.Kind == EvAck && e.Err == errHeld.Error() {
				deferred = true
			}
			if e.At != 0 {
				t.Errorf("switches %v: event %d (%v) at %v: the dropped retry sent something; every event is at 0s "+
					"(reproduce: go test -run '^TestRetryOfAnAckedMessageIsNoGroup$' ./engine)", f.Switches, e.Seq, e.Kind, e.At)
			}
		}
		if deferred {
			nacked++
		}
	}
	if nacked == 0 {
		t.Fatal("no interleaving had a copy nack on its sibling's live lease: the test no longer reaches the empty group " +
			"(reproduce: go test -run '^TestRetryOfAnAckedMessageIsNoGroup$' ./engine)")
	}
}

// observed is tape with an Observer that panics after attempt panicAt: a
// panic of the world's own code on the runner's goroutines, outside
// Deliver, where only the run boundary can catch it.
type observed struct {
	tape
	panicAt int
}

func (o *observed) AfterAttempt(_ *Port[struct{}], _ Node, attempt, _ int, _ time.Duration) {
	if attempt == o.panicAt {
		panic(fmt.Sprintf("injected: the observer broke after attempt %d", attempt))
	}
}

// TestEnginePanicIsRaisedOnTheCallersGoroutine injects a panic outside
// Deliver on each goroutine a run uses (the run's own, an interleaved
// group's, a free-running group's): Run must raise it on its caller's
// goroutine as a HarnessError naming its frame, where it can be recovered.
// Before, it escaped on the runner's goroutine and killed the test binary.
func TestEnginePanicIsRaisedOnTheCallersGoroutine(t *testing.T) {
	seq := frame(1, nil, Delivery{At: 0, Msg: 0, Node: 0}, Delivery{At: time.Second, Msg: 1, Node: 0})
	conc := frame(2, nil, Delivery{At: 0, Msg: 0, Node: 0}, Delivery{At: 0, Msg: 1, Node: 1})
	conc.Concurrent = true
	for _, c := range []struct {
		name string
		f    Frame
		o    RunOptions
	}{
		{"sequential", seq, RunOptions{}},
		{"interleaved", conc, RunOptions{}},
		{"free", conc, RunOptions{Free: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := runRecovering(func() { Run[struct{}](&observed{panicAt: 1}, c.f, two, c.o) })
			if e == nil {
				t.Fatalf("Run returned; want it to raise the observer's panic (reproduce: go test -run '^TestEnginePanicIsRaisedOnTheCallersGoroutine$/^%s$' ./engine)", c.name)
			}
			he, ok := e.(HarnessError)
			if !ok || !strings.Contains(he.Value, "observer broke after attempt 1") || !strings.Contains(he.Frame, "panic_test.go") || !strings.Contains(he.Stack, "AfterAttempt") {
				t.Fatalf("Run raised %#v; want a HarnessError with the observer's value, its frame in panic_test.go and a stack (reproduce: go test -run '^TestEnginePanicIsRaisedOnTheCallersGoroutine$/^%s$' ./engine)", e, c.name)
			}
			// The runner's goroutine pool survived: the next run is whole.
			if tr := Run[struct{}](&tape{}, c.f, two, c.o); len(tr.Events) == 0 || tr.Stalled {
				t.Fatalf("the run after the panic: %d events, stalled %v (reproduce: go test -run '^TestEnginePanicIsRaisedOnTheCallersGoroutine$/^%s$' ./engine)", len(tr.Events), tr.Stalled, c.name)
			}
		})
	}
}

// runRecovering runs f and returns what it panicked with (nil: nothing).
func runRecovering(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}
