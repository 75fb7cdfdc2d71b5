package faults_test

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
)

// keyed is a correct design for the runner's tests: a durable claim per
// settlement, a credit keyed by the settlement (the ledger makes it
// idempotent), a commit, and Recover completing claimed records. Its three
// effects per first delivery are claim (0), credit (1), commit (2).
type keyed struct{}

var _ faults.Design = keyed{}

func (keyed) Name() string               { return "keyed" }
func (keyed) NewCluster() faults.Cluster { return &keyedCluster{m: map[string]int{}} }
func keyOf(s faults.Settlement) string   { return fmt.Sprintf("p%d/m%d/%s", s.Player, s.Match, s.Kind) }
func (c *keyedCluster) NewNode(id int, env faults.Env) faults.Node {
	c.nodes++
	return &keyedNode{c: c, env: env}
}

type keyedCluster struct {
	mu      sync.Mutex
	m       map[string]int // 1 claimed, 2 delivered
	pending map[string]faults.Settlement
	nodes   int
}

type keyedNode struct {
	c   *keyedCluster
	env faults.Env
}

func (n *keyedNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	k := keyOf(s)
	var st int
	if err := n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		st = n.c.m[k]
		if st == 0 {
			n.c.m[k] = 1
			if n.c.pending == nil {
				n.c.pending = map[string]faults.Settlement{}
			}
			n.c.pending[k] = s
		}
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	if st == 2 {
		return faults.AckDuplicate, nil
	}
	if err := n.complete(k, s); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

func (n *keyedNode) complete(k string, s faults.Settlement) error {
	if _, err := n.env.Credit(k, s, s.Room); err != nil {
		return err
	}
	return n.env.Durable("commit", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		n.c.m[k] = 2
		delete(n.c.pending, k)
		return nil
	})
}

func (n *keyedNode) Recover(now time.Time) error {
	n.c.mu.Lock()
	var todo []faults.Settlement
	for _, s := range n.c.pending {
		todo = append(todo, s)
	}
	n.c.mu.Unlock()
	// Map order does not matter to the ledger, but histories must be
	// deterministic: complete in settlement order.
	sortByID(todo)
	var errs []error
	for _, s := range todo {
		errs = append(errs, n.complete(keyOf(s), s))
	}
	return errors.Join(errs...)
}

func sortByID(ss []faults.Settlement) {
	for i := 1; i < len(ss); i++ {
		for j := i; j > 0 && ss[j].ID < ss[j-1].ID; j-- {
			ss[j], ss[j-1] = ss[j-1], ss[j]
		}
	}
}

// naive credits every arrival, unkeyed: it double-credits any duplicate.
type naive struct{}

func (naive) Name() string               { return "naive" }
func (naive) NewCluster() faults.Cluster { return naiveCluster{} }

type naiveCluster struct{}

func (naiveCluster) NewNode(id int, env faults.Env) faults.Node { return naiveNode{env} }

type naiveNode struct{ env faults.Env }

func (n naiveNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}
