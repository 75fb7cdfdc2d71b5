// Package sharded is the row "sharded" of the design matrix: the three
// layers of source document 000_3fc5d928301791d1.txt ("11.3", window,
// durable unique constraint, state machine) with the fixes of DESIGN.md
// "Reference Settler", built on a window that is not ref's: MapWindow, 8
// shards of Go maps with per-shard expiry queues. It must hold everywhere,
// which shows that correctness lives in the order of the layers (window
// marked only after the commit, keyed credit, recovery of Granted records),
// not in one window implementation.
//
// The pipeline here is also what the ristretto design runs, with a
// ristretto cache as its window (package ristretto).
//
// Durable state and recovery are ref's: a ref.MemStore behind env.Durable
// (refdesign.EnvStore), the keyed credit refdesign.EnvSink, and
// ref.Settler.Recover to complete Granted records.
package sharded

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "sharded"

// Design is the sharded-window design.
type Design struct{}

var (
	_ faults.Design   = Design{}
	_ faults.Expecter = Design{}
)

// Name implements faults.Design.
func (Design) Name() string { return Name }

// NewCluster implements faults.Design.
func (Design) NewCluster() faults.Cluster {
	return NewCluster(func(int) Window { return NewMapWindow(faults.WindowTTL) })
}

// Expected implements faults.Expecter: sharded must hold everywhere.
func (Design) Expected() faults.Expectation { return faults.Expectation{} }

// Doc is the design's paragraph in results/matrix.md.
func (Design) Doc() string {
	return "The layers of source 000 with ref's fixes, on a different window: 8 shards of Go maps " +
		"with per-shard expiry queues (exact at the ttl boundary, bounded by the live set). Holds " +
		"everywhere: the window is marked only after the durable commit, the credit is keyed, and " +
		"Granted records are completed by the retry or Recover; which window sits in front does not matter."
}

// Stats counts where a cluster's nodes caught duplicates.
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

// Cluster is one run's durable state (the store) and its nodes' counters.
type Cluster struct {
	mem       *ref.MemStore
	newWindow func(node int) Window
	granted   atomic.Int64
	windowDup atomic.Int64
	storeDup  atomic.Int64
}

// NewCluster returns a cluster whose nodes build their window with
// newWindow (called with the node id each time a node is built, after a
// crash too).
func NewCluster(newWindow func(node int) Window) *Cluster {
	return &Cluster{mem: ref.NewMemStore(), newWindow: newWindow}
}

// Stats returns the counters of every node the cluster built.
func (c *Cluster) Stats() Stats {
	return Stats{Granted: c.granted.Load(), WindowDup: c.windowDup.Load(), StoreDup: c.storeDup.Load()}
}

// NewNode implements faults.Cluster.
func (c *Cluster) NewNode(id int, env faults.Env) faults.Node {
	st := refdesign.NewEnvStore(env, c.mem)
	sink := refdesign.EnvSink{Env: env}
	// ref.Settler only serves Recover here (its window is never used:
	// Recover does not touch it), so the completion of Granted records is
	// ref's code, not a copy.
	rec := ref.NewSettler(ref.NewWindow(time.Nanosecond, 1), st, ref.WithSink(sink))
	return &Node{c: c, env: env, win: c.newWindow(id), store: st, recoverer: rec}
}

// Node is one settler process: its own window, the cluster's store.
type Node struct {
	c         *Cluster
	env       faults.Env
	win       Window
	store     refdesign.EnvStore
	recoverer *ref.Settler
	last      atomic.Int64 // UnixNano of the latest delivery, for StateSize
}

var (
	_ faults.Node      = (*Node)(nil)
	_ faults.Recoverer = (*Node)(nil)
	_ faults.Bounded   = (*Node)(nil)
)

// Deliver implements faults.Node: window, claim, keyed credit, commit, mark.
func (n *Node) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.last.Store(now.UnixNano())
	key := refdesign.KeyOf(s)
	// Layer 1: the window holds only keys whose credit is durable.
	if n.win.Seen(key, now) {
		n.c.windowDup.Add(1)
		return faults.AckDuplicate, nil
	}
	// Layer 2: the durable claim. An error is "outcome unknown": nack, mark
	// nothing; the retry creates the record or completes it.
	ctx := context.Background()
	st, created, err := n.store.Begin(ctx, ref.Claim{Key: key, Payload: refdesign.Payload(s), LeaseUntil: now.Add(ref.DefaultLease)})
	if err != nil {
		return faults.Nack, err
	}
	if !created && st == ref.StateDelivered {
		n.c.storeDup.Add(1)
		n.win.Mark(key, now)
		return faults.AckDuplicate, nil
	}
	// Layer 3: Granted, ours or left by a crash or timeout: complete it
	// through the keyed credit (a no-op if it already landed), then commit.
	if _, err := n.env.Credit(key.String(), s, s.Room); err != nil {
		return faults.Nack, err
	}
	if err := n.store.Commit(ctx, key, ref.StateDelivered); err != nil {
		return faults.Nack, err
	}
	n.win.Mark(key, now)
	if created {
		n.c.granted.Add(1)
		return faults.AckCredited, nil
	}
	n.c.storeDup.Add(1)
	return faults.AckDuplicate, nil
}

// Recover implements faults.Recoverer: ref.Settler.Recover on the cluster's
// store, through the keyed credit.
func (n *Node) Recover(now time.Time) error {
	_, err := n.recoverer.Recover(context.Background(), now)
	return err
}

// StateSize implements faults.Bounded: the window's entries at the latest
// delivery's time.
func (n *Node) StateSize() int { return n.win.Len(time.Unix(0, n.last.Load())) }

// StateSpan implements faults.Bounded.
func (n *Node) StateSpan() time.Duration { return n.win.Span() }

// StateBound implements faults.Bounded.
func (n *Node) StateBound(l faults.Load) int { return n.win.Bound(l) }
