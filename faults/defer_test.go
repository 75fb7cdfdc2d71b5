package faults_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
	"github.com/onceproof/onceproof/props"
)

// leaseTTL is how long a claim's owner keeps it: 3 ticks of the
// generators' 1 ms clock, one more than their RetryAfter (2 ticks), so a
// sibling's retry lands inside a live lease at least once before the
// lease runs out, and the drain (an hour on) is far past it.
const leaseTTL = 3 * time.Millisecond

// leased is a correct design that defers to a live lease: a claim takes a
// lease for leaseTTL, and a delivery that finds another node's lease live
// nacks ("a live owner holds the lease") and touches nothing else; the
// owner credits under a grant key and commits; a lease that ran out (its
// owner crashed) is taken over; Recover completes every claim whose lease
// ran out. It holds every property wherever Keyed does: nothing is credited
// but under the settlement's grant key, a duplicate answer follows the
// commit, and the drain's Recover, past every lease, completes what a
// crash or the sender's giving up left claimed. BoundedState has nothing
// to judge (no faults.Bounded).
type leased struct{}

func (leased) Name() string { return "leased" }
func (leased) NewCluster() faults.Cluster {
	return &leaseCluster{recs: map[string]*leaseRec{}}
}

type leaseRec struct {
	s         faults.Settlement
	delivered bool
	owner     int
	until     time.Time
}

type leaseCluster struct {
	mu   sync.Mutex
	recs map[string]*leaseRec
}

func (c *leaseCluster) NewNode(id int, env faults.Env) faults.Node {
	return &leaseNode{c: c, id: id, env: env}
}

type leaseNode struct {
	c   *leaseCluster
	id  int
	env faults.Env
}

// claimed is what a claim found.
type claimed uint8

const (
	claimMine claimed = iota // this node holds the lease now
	claimDone                // delivered already
	claimHeld                // another node's lease is live
)

func (n *leaseNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	k := faultstest.GrantOf(s)
	var got claimed
	if err := n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		got = n.c.take(k, s, n.id, now)
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	switch got {
	case claimDone:
		return faults.AckDuplicate, nil
	case claimHeld:
		return faults.Nack, nil
	}
	if err := n.complete(k, s); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

// take claims k for node id at now (c.mu held).
func (c *leaseCluster) take(k string, s faults.Settlement, id int, now time.Time) claimed {
	r := c.recs[k]
	switch {
	case r == nil:
		c.recs[k] = &leaseRec{s: s, owner: id, until: now.Add(leaseTTL)}
	case r.delivered:
		return claimDone
	case r.owner != id && now.Before(r.until):
		return claimHeld
	default:
		r.owner, r.until = id, now.Add(leaseTTL)
	}
	return claimMine
}

func (n *leaseNode) complete(k string, s faults.Settlement) error {
	if _, err := n.env.Credit(k, s, s.Room); err != nil {
		return err
	}
	return n.env.Durable("commit", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		n.c.recs[k].delivered = true
		return nil
	})
}

// Recover completes every claim it can take (its own, or one whose lease
// ran out), in settlement order: a history must not depend on map order.
func (n *leaseNode) Recover(now time.Time) error {
	n.c.mu.Lock()
	var todo []faults.Settlement
	for k, r := range n.c.recs {
		if !r.delivered && n.c.take(k, r.s, n.id, now) == claimMine {
			todo = append(todo, r.s)
		}
	}
	n.c.mu.Unlock()
	slices.SortFunc(todo, func(a, b faults.Settlement) int { return a.ID - b.ID })
	var errs []error
	for _, s := range todo {
		errs = append(errs, n.complete(faultstest.GrantOf(s), s))
	}
	return errors.Join(errs...)
}

// TestLeaseDeferringDesignHoldsConcurrently is issue 26's crash: a copy
// nacked because its sibling on another node holds the lease queues a
// retry, the sibling is acked, and the retry is dropped when it falls due;
// when it was the only send at that instant, the concurrent group was
// empty and the interleaver indexed an empty goroutine list.
func TestLeaseDeferringDesignHoldsConcurrently(t *testing.T) {
	for _, f := range []faults.Family{faults.Concurrent, faults.SmallScope} {
		c := props.RunCell(leased{}, f, props.MatrixOptions{N: 50})
		if !c.Holds() {
			t.Errorf("leased under %s: %s (reproduce: go test -run '^TestLeaseDeferringDesignHoldsConcurrently$' ./faults)", f, c.Text())
		}
	}
}
