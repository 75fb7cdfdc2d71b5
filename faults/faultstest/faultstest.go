// Package faultstest holds minimal designs for testing the harness itself,
// as testing/fstest.MapFS is a minimal file system: a correct one, and one
// per way a design can go wrong (credit twice, nack forever, panic, block).
// They are deliberately tiny; real designs live in package impls.
package faultstest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
)

// GrantOf is the ledger key Keyed credits s under: its business identity.
func GrantOf(s faults.Settlement) string {
	return fmt.Sprintf("p%d/m%d/%s", s.Player, s.Match, s.Kind)
}

// Keyed is a correct design: a durable claim per settlement, a credit keyed
// by GrantOf (the ledger makes it idempotent), a commit, and Recover
// completing claimed records. A first delivery makes three effects: claim
// (0), credit (1), commit (2). It holds every property in every family.
type Keyed struct{}

var _ faults.Design = Keyed{}

func (Keyed) Name() string { return "keyed" }
func (Keyed) Doc() string {
	return "Claims durably, credits under a grant key, commits; Recover completes claims. Holds everywhere."
}

func (Keyed) NewCluster() faults.Cluster {
	return &keyedCluster{state: map[string]int{}, pending: map[string]faults.Settlement{}}
}

type keyedCluster struct {
	mu      sync.Mutex
	state   map[string]int // 1 claimed, 2 delivered
	pending map[string]faults.Settlement
}

func (c *keyedCluster) NewNode(id int, env faults.Env) faults.Node {
	return &keyedNode{c: c, env: env}
}

type keyedNode struct {
	c   *keyedCluster
	env faults.Env
}

func (n *keyedNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	k := GrantOf(s)
	var st int
	if err := n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		if st = n.c.state[k]; st == 0 {
			n.c.state[k] = 1
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
		n.c.state[k] = 2
		delete(n.c.pending, k)
		return nil
	})
}

// Recover completes every claimed record, in settlement order (the ledger
// does not care, but a history must not depend on map order).
func (n *keyedNode) Recover(now time.Time) error {
	n.c.mu.Lock()
	var todo []faults.Settlement
	for _, s := range n.c.pending {
		todo = append(todo, s)
	}
	n.c.mu.Unlock()
	slices.SortFunc(todo, func(a, b faults.Settlement) int { return a.ID - b.ID })
	var errs []error
	for _, s := range todo {
		errs = append(errs, n.complete(GrantOf(s), s))
	}
	return errors.Join(errs...)
}

// Naive credits every arrival, unkeyed: any duplicate is credited twice.
type Naive struct{}

func (Naive) Name() string                               { return "naive" }
func (Naive) NewCluster() faults.Cluster                 { return Naive{} }
func (Naive) NewNode(id int, env faults.Env) faults.Node { return naiveNode{env} }
func (n naiveNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

type naiveNode struct{ env faults.Env }

// Memo remembers in memory what it credited, and credits unkeyed: a crash
// after the credit forgets it, and the retry credits again (NoDup), while
// duplicates without a crash are caught.
type Memo struct{}

func (Memo) Name() string               { return "memo" }
func (Memo) NewCluster() faults.Cluster { return Memo{} }
func (Memo) NewNode(id int, env faults.Env) faults.Node {
	return &memoNode{env: env, seen: map[string]bool{}}
}

type memoNode struct {
	env  faults.Env
	mu   sync.Mutex // the concurrent family runs distinct nodes at once, never one node twice; the race detector still wants it
	seen map[string]bool
}

func (n *memoNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[GrantOf(s)] {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.seen[GrantOf(s)] = true
	return faults.AckCredited, nil
}

// NeverAcks nacks every delivery: the sender retries until it gives up, and
// nothing is ever credited.
type NeverAcks struct{}

func (NeverAcks) Name() string                        { return "never-acks" }
func (NeverAcks) NewCluster() faults.Cluster          { return NeverAcks{} }
func (NeverAcks) NewNode(int, faults.Env) faults.Node { return NeverAcks{} }
func (NeverAcks) Deliver(time.Time, faults.Settlement) (faults.Ack, error) {
	return faults.Nack, nil
}

// PanicsOnDebit is Keyed, except that Deliver panics on a settlement with a
// negative net (a debit).
type PanicsOnDebit struct{}

func (PanicsOnDebit) Name() string { return "panics-on-debit" }
func (PanicsOnDebit) NewCluster() faults.Cluster {
	return panicsCluster{Keyed{}.NewCluster().(*keyedCluster)}
}

type panicsCluster struct{ *keyedCluster }

func (c panicsCluster) NewNode(id int, env faults.Env) faults.Node {
	return panicsNode{c.keyedCluster.NewNode(id, env).(*keyedNode)}
}

type panicsNode struct{ *keyedNode }

func (n panicsNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	if s.Net < 0 {
		panic(fmt.Sprintf("cannot settle a debit of %d", s.Net))
	}
	return n.keyedNode.Deliver(now, s)
}

// LocksAcrossEnv holds a Cluster mutex across its env calls and unlocks it
// without defer, which faults.Design forbids: a crash injected inside the
// credit unwinds past the unlock and the next delivery blocks forever, and
// in the concurrent family a goroutine parked at an env call holds the lock
// its rival waits on. The runner's watchdog must end such a run (Stalled).
type LocksAcrossEnv struct{}

func (LocksAcrossEnv) Name() string               { return "locks-across-env" }
func (LocksAcrossEnv) NewCluster() faults.Cluster { return &lockingCluster{done: map[string]bool{}} }

type lockingCluster struct {
	mu   sync.Mutex
	done map[string]bool
}

func (c *lockingCluster) NewNode(id int, env faults.Env) faults.Node {
	return lockingNode{c: c, env: env}
}

type lockingNode struct {
	c   *lockingCluster
	env faults.Env
}

func (n lockingNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.c.mu.Lock()
	if n.c.done[GrantOf(s)] {
		n.c.mu.Unlock()
		return faults.AckDuplicate, nil
	}
	_, err := n.env.Credit(GrantOf(s), s, s.Room)
	if err == nil {
		n.c.done[GrantOf(s)] = true
	}
	n.c.mu.Unlock()
	if err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

// Flaky is Keyed, but nacks an arrival before touching anything whenever a
// hash of (settlement, time) says so: about one in three arrivals, so
// retries, round robin and the drain are all exercised. It holds everywhere.
type Flaky struct{}

func (Flaky) Name() string { return "flaky" }
func (Flaky) NewCluster() faults.Cluster {
	return flakyCluster{Keyed{}.NewCluster().(*keyedCluster)}
}

type flakyCluster struct{ *keyedCluster }

func (c flakyCluster) NewNode(id int, env faults.Env) faults.Node {
	return flakyNode{c.keyedCluster.NewNode(id, env).(*keyedNode)}
}

type flakyNode struct{ *keyedNode }

func (n flakyNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	h := uint64(s.Player)*1e9 + s.Match*31 + uint64(s.Kind)*7 + uint64(now.UnixNano()/int64(time.Millisecond))
	h ^= h >> 13
	h *= 0x9e3779b97f4a7c15
	if (h>>40)%3 == 0 {
		return faults.Nack, nil
	}
	return n.keyedNode.Deliver(now, s)
}

// As is d under another row name with a declaration, so that tests give one
// design different names and expectations.
func As(name string, d faults.Design, decl faults.Declaration) faults.Design {
	return named{name: name, d: d, decl: decl}
}

type named struct {
	name string
	d    faults.Design
	decl faults.Declaration
}

func (n named) Name() string                { return n.name }
func (n named) NewCluster() faults.Cluster  { return n.d.NewCluster() }
func (n named) Declare() faults.Declaration { return n.decl }
