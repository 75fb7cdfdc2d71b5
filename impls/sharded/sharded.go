// Package sharded is the row "sharded" of the design matrix: ref's Settler
// (the three layers of source 000 with ref's fixes) with another window in
// front, MapWindow, 8 shards of Go maps with per-shard expiry queues. It
// holds everywhere, which shows that correctness lives in the order of the
// layers, not in one window implementation; its declaration says why.
package sharded

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "sharded"

// Design is the sharded-window design.
type Design struct{}

var _ faults.Declarer = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// NewCluster implements faults.Design: ref's pipeline on a MemStore, each
// node with a MapWindow.
func (Design) NewCluster() faults.Cluster {
	return refdesign.NewCluster(ref.NewMemStore(), func(int) refdesign.Window { return NewMapWindow(faults.WindowTTL) })
}

// Declare implements faults.Declarer: sharded holds everywhere.
func (Design) Declare() faults.Declaration {
	return faults.Declaration{Doc: "ref's Settler (the layers of source 000 with ref's fixes) on another window: 8 shards of " +
		"Go maps with per-shard expiry queues, exact at the ttl boundary and bounded by the live set. It holds " +
		"everywhere, as ref does: the window is marked only after the durable commit, the credit is keyed, and " +
		"Granted records are completed by the retry or Recover; which window sits in front does not matter."}
}
