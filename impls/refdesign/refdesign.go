// Package refdesign runs the reference Settler of package ref as a design
// of the proof harness: the row "ref" of the design matrix (Design, each
// node with its own ref.Window in front of one shared ref.MemStore), the
// same row on a store the caller opened (OnStore: a user's
// props.TestDesign on their own PostgreSQL; OnStores: a fresh store per
// run, as `onceproof matrix -store` opens them), and ref's pipeline as a
// cluster on any store and window (NewCluster, for the rows that swap the
// window). Every store
// call is one env.Durable operation and the sink credits through
// env.Credit, so the runner injects faults where a real store fails. A
// design built on it is its window and one line of wiring. Design's
// declaration says why the row holds everywhere.
package refdesign

import (
	"github.com/onceproof/onceproof/faults"
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

var _ faults.Declarer = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// Declare implements faults.Declarer: ref holds in every family.
func (Design) Declare() faults.Declaration {
	return faults.Declaration{Doc: "The reference Settler of `ref/` (source 000, the three-layer settler, with the fixes of DESIGN.md, " +
		"\"Reference Settler\"): a window (ttl 2.5 matches) marked only after the durable commit, a durable unique " +
		"claim keyed by (player, match, kind), the state machine Granted -> Delivered, a keyed idempotent credit, and " +
		"Recover that completes Granted records through it. It holds everywhere: a window hit is an honest " +
		"\"already delivered\" (the window is marked after the commit); a failed or timed-out claim marks nothing and " +
		"the retry creates the record or completes it through the keyed credit (a no-op where the first credit " +
		"landed); a crash anywhere leaves at most a Granted record that the retry or Recover completes, never " +
		"re-grants; and the durable record outlives every window, so deep replays and window expiry are caught " +
		"by the store."}
}

// NewCluster implements faults.Design: a fresh MemStore.
func (Design) NewCluster() faults.Cluster { return NewCluster(ref.NewMemStore(), NewWindow) }

// NewWindow is the window every node of the ref row builds: a ref.Window
// of ttl faults.WindowTTL (the node id does not matter).
func NewWindow(int) Window { return ref.NewWindow(faults.WindowTTL, windowShards) }
