package engine

import (
	"errors"
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
