// Package windowonly is the row "window-only" of the design matrix: the
// in-memory idempotency window of source document 000 (its first layer)
// with the durable unique constraint and the state machine removed, the
// mutant "window without durable store". Everything else is as in ref: the
// window is marked only after the credit succeeded, so a failed credit is
// retried, not lost. Its declaration derives where it fails.
package windowonly

import (
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "window-only"

// Design is the window without a store.
type Design struct{}

var _ faults.Declarer = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// Declare implements faults.Declarer.
func (Design) Declare() faults.Declaration {
	noDup := []faults.Property{faults.Properties.NoDup}
	return faults.Declaration{
		Doc: "Layer 1 of source 000 alone: the in-memory window (ttl 2.5 matches), marked after an unkeyed credit " +
			"(without a durable record there is no grant key to keep: the window is the only memory of what was " +
			"credited), with no durable constraint behind it.",
		Fails: []faults.Expect{
			{Families: []faults.Family{faults.Families.DeepReplay, faults.Families.WindowExpiry, faults.Families.LongHistory}, Props: noDup,
				Why: "a retry or replay after the ttl finds nothing and is credited again; the source's own diagram says " +
					"the durable constraint exists for exactly this boundary"},
			{Families: []faults.Family{faults.Families.Crash, faults.Families.SmallScope}, Props: noDup,
				Why: "a crash after the credit, before the ack, loses the window with the node; the retry meets an empty window"},
			{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: noDup,
				Why: "the credit landed but reported an error, so the window was not marked and the retry credits again"},
			{Families: []faults.Family{faults.Families.MultiNode}, Props: noDup,
				Why: "a retry on another node meets that node's empty window"},
			{Families: []faults.Family{faults.Families.Pause}, Props: noDup,
				Why: "the late copy comes 35 s after the frozen call's arrival (farPause), past the ttl, or on another node, " +
					"whose window never saw it: credited again (NoDup), as under deep-replay and multi-node"},
			{Families: []faults.Family{faults.Families.Concurrent}, Props: noDup,
				Why: "lookup, credit and put are three steps: identical deliveries at once all pass the lookup before any put"},
			{Families: []faults.Family{faults.Families.InNode}, Props: noDup,
				Why: "the same check-then-act inside one node: the window is safe for concurrent use, but lookup, credit and " +
					"put are three calls, so two calls of one node at once both miss the lookup and both credit"},
		},
	}
}

// NewCluster implements faults.Design. There is no durable state.
func (Design) NewCluster() faults.Cluster { return cluster{} }

type cluster struct{}

// NewNode implements faults.Cluster.
func (cluster) NewNode(id int, env faults.Env) faults.Node {
	return &Node{env: env, win: ref.NewWindow(faults.WindowTTL, 4)}
}

// Node is a window and nothing else.
type Node struct {
	env faults.Env
	win *ref.Window
}

var _ faults.Node = (*Node)(nil)

// Deliver implements faults.Node.
func (n *Node) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	fp := uint64(refdesign.KeyOf(s).Fingerprint())
	if _, ok := n.win.Lookup(fp, now); ok {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.win.Put(fp, 1, now)
	return faults.AckCredited, nil
}
