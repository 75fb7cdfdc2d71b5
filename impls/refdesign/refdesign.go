// Package refdesign is the row "ref" of the design matrix: the reference
// Settler of package ref run as a design of the proof harness, each node
// with its own ref.Window in front of one shared store (a ref.MemStore
// here, a real store under `onceproof matrix -store`). Its declaration says
// why it holds everywhere.
package refdesign

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/internal/refenv"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "ref"

// windowShards is the shard count of each node's window. The harness runs a
// handful of players per schedule, so contention is irrelevant; 4 matches
// the source document's tests.
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

// NewCluster implements faults.Design: a fresh MemStore.
func (Design) NewCluster() faults.Cluster { return NewCluster(ref.NewMemStore()) }

// NewCluster is the ref row on st: every node a ref.Settler with its own
// window (ttl faults.WindowTTL) on st.
func NewCluster(st ref.PendingStore) *refenv.Cluster {
	return refenv.NewCluster(st, func(int) refenv.Window { return ref.NewWindow(faults.WindowTTL, windowShards) })
}
