package refdesign

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/ref"
)

// Window is the Memory a node puts in front of the store, with what
// BoundedState needs: Live is how many entries would answer a Lookup at
// now, TTL the span they live for. A Window may also implement
// Bound(faults.Load) int to declare another bound than the default, the
// settlements that arrived in the trailing TTL (rate x ttl).
type Window interface {
	ref.Memory
	Live(now time.Time) int
	TTL() time.Duration
}

// Cluster is the durable state shared by the nodes: one store, and how each
// node builds its window.
type Cluster struct {
	store     ref.PendingStore
	newWindow func(node int) Window
	stats     [3]atomic.Int64 // granted, window dups, store dups
}

var _ faults.Cluster = (*Cluster)(nil)

// NewCluster returns a cluster on st whose nodes build their window with
// newWindow (called with the node's id each time one is built, after a
// crash too).
func NewCluster(st ref.PendingStore, newWindow func(node int) Window) *Cluster {
	return &Cluster{store: st, newWindow: newWindow}
}

// Stats counts where a cluster's nodes (crashed ones included) caught
// duplicates.
type Stats struct {
	Granted   int64 // deliveries that claimed their key
	WindowDup int64 // duplicates the window caught
	StoreDup  int64 // duplicates the store caught (the window missed)
}

// CatchRate is the share of caught duplicates the window caught, in [0,1]
// (0 when there was none).
func (s Stats) CatchRate() float64 {
	if s.WindowDup+s.StoreDup == 0 {
		return 0
	}
	return float64(s.WindowDup) / float64(s.WindowDup+s.StoreDup)
}

// Stats returns the counters of every node the cluster built.
func (c *Cluster) Stats() Stats {
	return Stats{Granted: c.stats[0].Load(), WindowDup: c.stats[1].Load(), StoreDup: c.stats[2].Load()}
}

// NewNode implements faults.Cluster: a Settler on the cluster's store
// through env, with a fresh window.
func (c *Cluster) NewNode(id int, env faults.Env) faults.Node {
	win := c.newWindow(id)
	st := store{env: env, st: c.store}
	return &Node{c: c, win: win, settler: ref.NewSettlerOn(win, st, ref.WithSink(sink{env}))}
}

// Node is one settler process: its own window, the cluster's store.
type Node struct {
	c       *Cluster
	win     Window
	settler *ref.Settler
}

var (
	_ faults.Node      = (*Node)(nil)
	_ faults.Recoverer = (*Node)(nil)
	_ faults.Bounded   = (*Node)(nil)
)

// Deliver implements faults.Node: ref.Settler.Apply on the settlement's
// identity, then AckCredited when this call claimed the key, AckDuplicate
// when a layer caught it, Nack on error.
func (n *Node) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	res, err := n.settler.Apply(context.Background(), KeyOf(s), Payload(s), now)
	if err != nil {
		return faults.Nack, err
	}
	switch res.Caught {
	case ref.LayerWindow:
		n.c.stats[1].Add(1)
	case ref.LayerStore:
		n.c.stats[2].Add(1)
	default:
		n.c.stats[0].Add(1)
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

// StateSize implements faults.Bounded: the window's live entries.
func (n *Node) StateSize(now time.Time) int { return n.win.Live(now) }

// StateSpan implements faults.Bounded: the window's ttl.
func (n *Node) StateSpan() time.Duration { return n.win.TTL() }

// StateBound implements faults.Bounded: the window's own bound, or the
// settlements that arrived within its ttl (an exact window holds no more:
// each live entry is one of them).
func (n *Node) StateBound(l faults.Load) int {
	if b, ok := n.win.(interface{ Bound(faults.Load) int }); ok {
		return b.Bound(l)
	}
	return l.Recent
}

// store is a ref.PendingStore whose every call is one env.Durable operation
// on the cluster's store: "claim" (Begin), "commit" and "pending". On
// ErrTimeout the effect happened and the error still reaches the Settler:
// the "outcome unknown" case of the ref.Store contract.
type store struct {
	env faults.Env
	st  ref.PendingStore
}

func (s store) Begin(ctx context.Context, c ref.Claim) (st ref.State, created bool, err error) {
	err = s.env.Durable("claim", func() error {
		var e error
		st, created, e = s.st.Begin(ctx, c)
		return e
	})
	return st, created, err
}

func (s store) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	return s.env.Durable("commit", func() error { return s.st.Commit(ctx, key, st) })
}

func (s store) Pending(ctx context.Context, now time.Time, limit int) (recs []ref.Record, err error) {
	err = s.env.Durable("pending", func() error {
		var e error
		recs, e = s.st.Pending(ctx, now, limit)
		return e
	})
	return recs, err
}

// sink credits through env.Credit, keyed by the grant key's text: the
// ledger applies a key once, which is the ref.Sink contract.
type sink struct{ env faults.Env }

func (k sink) Deliver(_ context.Context, key ref.Key, payload []byte) error {
	s, err := SettlementOf(payload)
	if err != nil {
		return err
	}
	_, err = k.env.Credit(key.String(), s, s.Room)
	return err
}
