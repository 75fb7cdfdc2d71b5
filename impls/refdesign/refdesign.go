// Package refdesign is the row "ref" of the design matrix: the reference
// Settler of package ref (source document 000_3fc5d928301791d1.txt, "11.3
// 至少一次投递下的正确性", with the four fixes of DESIGN.md "Reference
// Settler") run as a Design of the proof harness.
//
// Each node owns a ref.Window (ttl faults.WindowTTL) and a ref.Settler built
// WithSink; the cluster owns one ref.MemStore, the durable unique constraint
// shared by every node. Every store call goes through env.Durable ("claim",
// "commit", "pending") and the sink credits through env.Credit with the grant
// key ref.Key.String(), a keyed (idempotent) credit. The key is
// ref.KeyOf(settlementOp, player, match, kind): the settlement's true
// identity, so no two distinct settlements share it.
//
// Why it holds everywhere: the window is marked only after the commit, so a
// window hit is an honest "already delivered"; a failed or timed-out claim
// marks nothing and the retry either creates the record or finds it Granted
// and completes it through the keyed credit (a no-op when the first credit
// landed); a crash anywhere leaves at most a Granted record that the retry or
// Recover completes, never re-grants; the durable record outlives every
// window, so deep replays and window expiry are caught by the store.
package refdesign

import (
	"context"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "ref"

// windowShards is the shard count of each node's window. The harness runs a
// handful of players per schedule, so contention is irrelevant; 4 matches
// the seed's tests.
const windowShards = 4

// Design is the reference design.
type Design struct{}

var _ faults.Design = Design{}
var _ faults.Expecter = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// Expected implements faults.Expecter: ref must hold in every family.
func (Design) Expected() faults.Expectation { return faults.Expectation{} }

// Doc is the design's paragraph in results/matrix.md.
func (Design) Doc() string {
	return "The reference Settler of `ref/` (source 000, the three-layer settler, with the fixes of DESIGN.md): " +
		"window (ttl 2.5 matches) marked only after the durable commit, a durable unique claim keyed by " +
		"(player, match, kind), state machine Granted -> Delivered, a keyed idempotent credit and Recover " +
		"that completes Granted records through it. Holds everywhere: the window only speeds up what the " +
		"store already decides, and a crash or failed call leaves a record that the retry or Recover " +
		"completes without granting twice."
}

// NewCluster implements faults.Design.
func (Design) NewCluster() faults.Cluster { return &Cluster{mem: ref.NewMemStore()} }

// Cluster is the durable state: one MemStore shared by every node.
type Cluster struct {
	mem *ref.MemStore
}

// NewNode implements faults.Cluster.
func (c *Cluster) NewNode(id int, env faults.Env) faults.Node {
	return newNode(env, NewEnvStore(env, c.mem))
}

// newNode is a node on st: its own window, the keyed credit through env.
func newNode(env faults.Env, st EnvStore) *Node {
	win := ref.NewWindow(faults.WindowTTL, windowShards)
	return &Node{win: win, settler: ref.NewSettler(win, st, ref.WithSink(EnvSink{Env: env}))}
}

// Node is one settler process: its own window, the cluster's store.
type Node struct {
	win     *ref.Window
	settler *ref.Settler
}

var (
	_ faults.Node      = (*Node)(nil)
	_ faults.Recoverer = (*Node)(nil)
	_ faults.Bounded   = (*Node)(nil)
)

// Deliver implements faults.Node: Apply, then AckCredited when this call
// claimed the key, AckDuplicate when a layer caught it, Nack on error.
func (n *Node) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	res, err := n.settler.Apply(context.Background(), KeyOf(s), Payload(s), now)
	if err != nil {
		return faults.Nack, err
	}
	if res.Fresh {
		return faults.AckCredited, nil
	}
	return faults.AckDuplicate, nil
}

// Recover implements faults.Recoverer: ref.Settler.Recover.
func (n *Node) Recover(now time.Time) error {
	_, err := n.settler.Recover(context.Background(), now)
	return err
}

// Stats returns the settler's counters (where duplicates were caught).
func (n *Node) Stats() ref.SettlerStats { return n.settler.Stats() }

// StateSize implements faults.Bounded: the window's entries.
func (n *Node) StateSize() int { return n.win.Len() }

// StateSpan implements faults.Bounded: the window's ttl.
func (n *Node) StateSpan() time.Duration { return faults.WindowTTL }

// StateBound implements faults.Bounded. The window holds one live entry per
// distinct settlement the node settled within the trailing ttl (at most
// l.Recent), plus expired entries it has not reclaimed yet: ref.Window
// reclaims lazily (an insert reuses an expired slot, a census clears them),
// so Len counts them until then. While a shard's table has its smallest
// size, those are at most its slots (minTableSlots); every generated
// schedule stays there (a shard grows past about 14 held entries, and a
// node holds at most about 20 spread over windowShards shards). A run that
// grows a table needs a live count from ref.Window to be judged exactly.
func (n *Node) StateBound(l faults.Load) int { return l.Recent + windowShards*minTableSlots }

// minTableSlots is the slots of ref.Window's smallest shard table: 2
// buckets x 8 slots (ref/window.go windowMinBuckets, windowSlots). Redo the
// bound above if ref changes them.
const minTableSlots = 2 * 8
