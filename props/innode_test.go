package props_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
)

// markFirst is a design correct whenever a node takes one call at a time
// and wrong when it takes two: an atomic durable claim, a keyed credit and
// a commit (ref's pipeline), in front of which each node keeps an
// in-memory set of the keys it has taken on. It checks the set and, on a
// hit, answers "already delivered"; on a miss it marks the key at once,
// does the durable work, and unmarks it if that failed (the seed's
// window-before-claim bug, fixed for errors). One call at a time, a mark
// is only ever seen after its call committed, or undone: every answer is
// honest, and a crash takes the set with it. Two calls at once on one
// node: the second checks the set while the first, which marked it, has
// not yet credited, and acks a credit that is not durable (HonestAck).
// The set is a sync.Map, so the race is logical, not a data race: -race
// stays quiet. locked is the same design with a per-node mutex around the
// check, the durable work and the mark: it holds in-node too.
type markFirst struct {
	name   string
	locked bool
	decl   faults.Declaration
}

func (d markFirst) Name() string                { return d.name }
func (d markFirst) Declare() faults.Declaration { return d.decl }
func (d markFirst) NewCluster() faults.Cluster {
	return &markFirstCluster{locked: d.locked, claims: map[string]*claim{}}
}

type markFirstCluster struct {
	locked bool
	mu     sync.Mutex // guards claims: one store call at a time
	claims map[string]*claim
}

// claim is a durable claim record: the settlement, and whether its credit
// is committed.
type claim struct {
	s    faults.Settlement
	done bool
}

func (c *markFirstCluster) NewNode(_ int, env faults.Env) faults.Node {
	return &markFirstNode{c: c, env: env}
}

type markFirstNode struct {
	c    *markFirstCluster
	env  faults.Env
	mu   sync.Mutex // held across a whole Deliver when c.locked
	seen sync.Map   // keys this node has taken on
}

func (n *markFirstNode) Deliver(_ time.Time, s faults.Settlement) (faults.Ack, error) {
	if n.c.locked {
		n.mu.Lock()
		defer n.mu.Unlock()
	}
	key := fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind)
	if _, hit := n.seen.Load(key); hit {
		return faults.AckDuplicate, nil
	}
	n.seen.Store(key, true)
	fresh, err := n.settle(key, s)
	if err != nil {
		n.seen.Delete(key)
		return faults.Nack, err
	}
	if fresh {
		return faults.AckCredited, nil
	}
	return faults.AckDuplicate, nil
}

// settle is ref's pipeline on the cluster's claims: an atomic claim, a
// keyed credit (a no-op where an earlier one landed), a commit. It
// reports whether the claim was this call's.
func (n *markFirstNode) settle(key string, s faults.Settlement) (bool, error) {
	var created, done bool
	err := n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		c, ok := n.c.claims[key]
		created, done = !ok, ok && c.done
		if !ok {
			n.c.claims[key] = &claim{s: s}
		}
		return nil
	})
	if err != nil || done {
		return false, err
	}
	if _, err := n.env.Credit(key, s, s.Room); err != nil {
		return false, err
	}
	err = n.env.Durable("commit", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		n.c.claims[key].done = true
		return nil
	})
	return created, err
}

// Recover completes what a crash left claimed and not committed, through
// the keyed credit (a no-op where the credit landed).
func (n *markFirstNode) Recover(time.Time) error {
	var open []string
	pending := map[string]faults.Settlement{}
	err := n.env.Durable(faults.Read("pending"), func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		for k, c := range n.c.claims {
			if !c.done {
				open = append(open, k)
				pending[k] = c.s
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(open) // map order must not reach the history
	for _, key := range open {
		s := pending[key]
		if _, err := n.env.Credit(key, s, s.Room); err != nil {
			return err
		}
		if err := n.env.Durable("commit", func() error {
			n.c.mu.Lock()
			defer n.c.mu.Unlock()
			n.c.claims[key].done = true
			return nil
		}); err != nil {
			return err
		}
	}
	return nil
}

var (
	markFirstRacy = markFirst{name: "test-mark-first", decl: faults.Declaration{Fails: []faults.Expect{{
		Families: []faults.Family{faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
		Why: "two calls at once on one node: the second finds the key the first marked before its credit and acks it as delivered"}}}}
	markFirstLocked = markFirst{name: "test-mark-first-locked", locked: true}
)

// TestMarkFirstHoldsOneCallAtATime shows the race is in-node's alone: the
// mark-first design holds every column of the matrix, where a node takes
// one call at a time (the concurrent family too: its goroutines are one
// per node).
func TestMarkFirstHoldsOneCallAtATime(t *testing.T) {
	props.TestDesign(t, markFirstRacy, props.StrictExpectations(), props.Dir(t.TempDir()))
}

// TestInNodeFindsACheckThenActRaceInOneNode: the in-node family fails the
// mark-first design (HonestAck), and holds it with a mutex around the same
// check.
func TestInNodeFindsACheckThenActRaceInOneNode(t *testing.T) {
	for _, d := range []markFirst{markFirstRacy, markFirstLocked} {
		t.Run(d.name, func(t *testing.T) {
			props.TestDesign(t, d, props.Families(faults.Families.InNode), props.StrictExpectations(), props.Dir(t.TempDir()))
		})
	}
}

// TestRegisteredDesignsUnderInNode runs every registered design under
// in-node as TestDesign does, in bubbles: each must show exactly what it
// declares there (with StrictExpectations: a declared failure must show).
func TestRegisteredDesignsUnderInNode(t *testing.T) {
	for _, d := range impls.All() {
		t.Run(d.Name(), func(t *testing.T) {
			props.TestDesign(t, d, props.Families(faults.Families.InNode), props.StrictExpectations(), props.Dir(t.TempDir()))
		})
	}
}

// panicky credits instants under their key and panics on every final: in
// an in-node group the panic is a verdict (Responsive; the final is never
// credited: NoLoss), the node is rebuilt after the group while its sibling
// calls finish on the old one, and nothing escapes as a harness error.
type panicky struct{}

func (panicky) Name() string                              { return "test-panicky" }
func (panicky) NewCluster() faults.Cluster                { return panicky{} }
func (panicky) NewNode(_ int, env faults.Env) faults.Node { return panickyNode{env} }
func (panicky) Declare() faults.Declaration {
	return faults.Declaration{Fails: []faults.Expect{{Families: []faults.Family{faults.Families.InNode},
		Props: []faults.Property{faults.Properties.NoLoss, faults.Properties.Responsive},
		Why:   "every final panics (Responsive) and is never credited (NoLoss)"}}}
}

type panickyNode struct{ env faults.Env }

func (n panickyNode) Deliver(_ time.Time, s faults.Settlement) (faults.Ack, error) {
	if s.Final {
		panic("a final")
	}
	if _, err := n.env.Credit(fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind), s, s.Room); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

// TestInNodeReportsAPanicAsAVerdict: a design's panic on one of several
// calls at once on a node fails Responsive, as it does one call at a time.
func TestInNodeReportsAPanicAsAVerdict(t *testing.T) {
	props.TestDesign(t, panicky{}, props.Families(faults.Families.InNode), props.Schedules(20, 1), props.StrictExpectations(), props.Dir(t.TempDir()))
}
