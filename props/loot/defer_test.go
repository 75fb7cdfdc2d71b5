package lootprops_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// answer is how a deferring loot design answers what loot-ref answered.
type answer uint8

const (
	// answerLate nacks each request's first arrival before it touches
	// anything: only a later send gets an answer, as from a node that
	// defers to a live lease or is still warming up.
	answerLate answer = iota
	// answerUnknown handles the first arrival as loot-ref does, and
	// nacks it with an error if loot-ref acked it, as if the reply were
	// lost: the request took effect and the sender cannot know.
	answerUnknown
	// answerNoted answers noted ("acknowledged, no claim about the
	// outcome", source 004's "settle triggered") wherever loot-ref
	// answered accepted.
	answerNoted
)

// deferred is loot-ref answering as answer says. Each request's first
// arrival is marked in a store call of its own, so the mark is durable
// and a fault point like every other. It is a correct design: a nack
// claims nothing (the sender retries, and loot-ref answers a retry as a
// duplicate or judges it afresh) and noted claims nothing either, so
// HonestAnswer has nothing more to judge than loot-ref's answers, and the
// database and inventory, which every other property judges, are
// loot-ref's, changed only by the retries a nack brings, which loot-ref
// already survives in every family (duplicate-claim, store-error).
type deferred struct {
	name   string
	answer answer
}

func (d deferred) Name() string { return d.name }
func (d deferred) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &deferCluster{Cluster: lootref.Design{}.NewCluster(db), answer: d.answer, seen: map[string]bool{}}
}

type deferCluster struct {
	lootfaults.Cluster
	answer answer
	mu     sync.Mutex      // RunOptions.Free runs two nodes' store calls at once
	seen   map[string]bool // requests that arrived, by kind/session/player
}

func (c *deferCluster) NewNode(id int, env lootfaults.Env) lootfaults.Node {
	return deferNode{c: c, env: env, inner: c.Cluster.NewNode(id, env)}
}

type deferNode struct {
	c     *deferCluster
	env   lootfaults.Env
	inner lootfaults.Node
}

// errLost is answerUnknown's nack after the request took effect.
var errLost = errors.New("the reply was lost: the request may have taken effect")

// errLater is answerLate's nack of a first arrival.
var errLater = errors.New("not now: try again")

// first marks r arrived and reports whether it had not before, in one
// store call.
func (n deferNode) first(r lootfaults.Req) (bool, error) {
	k := fmt.Sprintf("%v/%s/%d", r.Kind, r.Session, r.Player)
	fresh := false
	err := n.env.Store("defer-mark", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		fresh = !n.c.seen[k]
		n.c.seen[k] = true
		return nil
	})
	return fresh, err
}

func (n deferNode) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	switch n.c.answer {
	case answerLate:
		fresh, err := n.first(r)
		if err != nil {
			return engine.Nack, err
		}
		if fresh {
			return engine.Nack, errLater
		}
		return n.inner.Handle(now, r)
	case answerUnknown:
		// The mark comes first: a store call between loot-ref's and its
		// answer would make the answer later than loot-ref's, and a claim
		// accepted by then may be answered after the freeze (FrozenClaims
		// judges the answer's time).
		fresh, err := n.first(r)
		if err != nil {
			return engine.Nack, err
		}
		a, err := n.inner.Handle(now, r)
		if err == nil && a.Acked() && fresh {
			return engine.Nack, errLost
		}
		return a, err
	}
	a, err := n.inner.Handle(now, r)
	if a == lootfaults.Accepted {
		a = lootfaults.Noted
	}
	return a, err
}

func (n deferNode) Recover(now time.Time) error {
	if r, ok := n.inner.(lootfaults.Recoverer); ok {
		return r.Recover(now)
	}
	return nil
}

// deferN is the schedules per family: the kit's -short budget (20; a loot
// cell runs half of it, 15 times that under the rare-failure families),
// which reaches what each family exists for.
const deferN = engine.ShortMatrixN

// TestDeferringLootDesignsRunEveryFamily runs every loot family against
// loot-ref answering late, unknown and noted: no cell may end in a harness
// error, an unknown run or a stall, and each must hold, as loot-ref does.
func TestDeferringLootDesignsRunEveryFamily(t *testing.T) {
	for _, d := range []deferred{{"loot-ref-late", answerLate}, {"loot-ref-unknown", answerUnknown}, {"loot-ref-noted", answerNoted}} {
		// A first arrival answered late makes one effect (the mark), so a
		// family's faults placed past it on that attempt (lock-expiry's
		// and compensation-race's pauses of a settle) never fire: the
		// cell may not reach what its family exists for, which says
		// nothing about the design.
		mayMiss := d.answer == answerLate
		for _, free := range []bool{false, true} {
			opt := engine.MatrixOptions[lootfaults.Design]{N: deferN, ShrinkBudget: 1, Run: engine.RunOptions{Free: free}}
			if free {
				// Free changes only how concurrent groups run.
				opt.Families = []engine.Family{lootfaults.Families.ConcurrentSettle}
			}
			row := engine.Check(lootprops.World, lootfaults.Design(d), opt)
			for _, c := range row.Cells {
				rerun := fmt.Sprintf("(reproduce: go test -run '^TestDeferringLootDesignsRunEveryFamily$' ./props/loot; design %s, family %s, free %v, n %d)", d.name, c.Family, free, deferN)
				switch {
				case c.Harness != nil:
					t.Errorf("%s %s", c.Harness, rerun)
				case c.Unknown > 0 || len(c.Unexercised) > 0 && !free && !mayMiss:
					// (Free goroutines may happen not to overlap.)
					t.Errorf("%s under %s: %s %s", d.name, c.Family, c.Text(), rerun)
				case len(c.Failed) > 0:
					t.Errorf("%s under %s: %s; want it to hold, as loot-ref does %s", d.name, c.Family, c.Text(), rerun)
				}
			}
		}
	}
}
