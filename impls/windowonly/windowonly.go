// Package windowonly is the row "window-only" of the design matrix: the
// in-memory idempotency window of source document 000_3fc5d928301791d1.txt
// (layer ① 幂等窗口) with layers ② (the durable unique constraint) and ③
// (the state machine) removed: the mutant "window without durable store" of
// DESIGN.md. Everything else is as in ref: the window is marked only after
// the credit succeeded, so a failed credit is retried, not lost.
//
// Credit is unkeyed: without a durable record there is no grant key to keep,
// the window is the only memory of what was credited.
//
// Why it fails NoDup:
//   - window-expiry and deep-replay: a retry or replay after the ttl finds
//     nothing and is credited again; the source's own diagram says the
//     durable constraint exists for exactly this ("这正是「窗口已过期」的边界").
//   - crash: a crash after the credit, before the ack, loses the window with
//     the node; the retry lands on an empty window.
//   - timeout-after-success: the credit landed but reported an error, so
//     the window was not marked and the retry credits again.
//   - multi-node: a retry on another node meets that node's empty window.
//   - concurrent: Lookup, credit and Put are three steps; identical
//     deliveries at once all pass the Lookup before any Put.
package windowonly

import (
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/internal/refenv"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "window-only"

// Design is the window without a store.
type Design struct{}

var _ faults.Design = Design{}
var _ faults.Expecter = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// Expected implements faults.Expecter. Derivations in the package comment.
func (Design) Expected() faults.Expectation {
	return faults.Expectation{
		faults.DeepReplay:     {faults.NoDup},
		faults.WindowExpiry:   {faults.NoDup},
		faults.Crash:          {faults.NoDup},
		faults.TimeoutSuccess: {faults.NoDup},
		faults.MultiNode:      {faults.NoDup},
		faults.Concurrent:     {faults.NoDup},
	}
}

// Doc is the design's paragraph in results/matrix.md.
func (Design) Doc() string {
	return "Layer 1 of source 000 alone: the in-memory window (ttl 2.5 matches), marked after an " +
		"unkeyed credit, with no durable constraint behind it. Anything the window cannot see is " +
		"credited again: a replay past the ttl (deep-replay, window-expiry), a retry after a crash " +
		"emptied the window, a retry on another node, a credit that timed out after it landed, " +
		"identical deliveries racing past the lookup (NoDup)."
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
	fp := uint64(refenv.KeyOf(s).Fingerprint())
	if _, ok := n.win.Lookup(fp, now); ok {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.win.Put(fp, 1, now)
	return faults.AckCredited, nil
}
