// Package seedverbatim is the row "seed-verbatim" of the design matrix: the
// Settler exactly as source document 000 writes it (window Put before the
// durable claim, Begin, Commit, the caller's unkeyed credit, no Recover),
// kept so that the fixes in ref/ stay proven necessary. Its declaration
// derives where it fails.
//
// The source's Begin and Commit return no error. Here they run through
// env.Durable, which can fail; a failed Begin is reported to the sender (a
// Nack: the least any caller can do), a failed Commit is ignored as in the
// source, whose caller credits on fresh=true whatever the Commit did.
package seedverbatim

import (
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/ref"
)

// Name is the design's matrix row.
const Name = "seed-verbatim"

// Design is the seed's settler.
type Design struct{}

var _ faults.Declarer = Design{}

// Name implements faults.Design.
func (Design) Name() string { return Name }

// lostAndLied: never credited (NoLoss), and acked "duplicate" (HonestAck).
var lostAndLied = []faults.Property{faults.Properties.NoLoss, faults.Properties.HonestAck}

// Declare implements faults.Declarer.
func (Design) Declare() faults.Declaration {
	return faults.Declaration{
		Doc: "The settler of source 000 verbatim: window Put before the durable claim (a live entry is a duplicate), " +
			"Begin (an existing record is a duplicate, whatever its state), Commit(Delivered), then the caller credits, " +
			"unkeyed (the source's caller \"delivers when fresh\" and has no idempotent sink). There is no Recover.",
		Fails: []faults.Expect{
			{Families: []faults.Family{faults.Families.StoreError}, Props: lostAndLied,
				Why: "the window is marked before the claim; when the claim (or the caller's credit) fails, the sender retries " +
					"inside the ttl, the window says \"duplicate\", and the settlement is never credited, with a false ack"},
			{Families: []faults.Family{faults.Families.Crash, faults.Families.SmallScope}, Props: lostAndLied,
				Why: "a crash after Begin or after Commit, before the credit, leaves a record that every retry reads as a " +
					"duplicate: nothing completes a Granted record, and Commit(Delivered) runs before the credit"},
			{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: lostAndLied,
				Why: "a claim that landed but timed out makes the retry find the record and drop it as a duplicate"},
			{Families: []faults.Family{faults.Families.MultiNode}, Props: lostAndLied,
				Why: "a claim that fails on one node leaves that node's window marked; a copy landing there before the retry " +
					"succeeds elsewhere is acked \"duplicate\", the sender stops, and nothing ever credits it"},
			{Families: []faults.Family{faults.Families.Pause}, Props: []faults.Property{faults.Properties.HonestAck},
				Why: "a call frozen after its Begin, before its credit, leaves a record that the sender's retry on another " +
					"node reads as a duplicate and acks before anything is credited (HonestAck), as under concurrent; the " +
					"frozen call credits when it resumes, so nothing is lost"},
			{Families: []faults.Family{faults.Families.Concurrent}, Props: []faults.Property{faults.Properties.HonestAck},
				Why: "node B's Begin finds the record node A just claimed and acks \"duplicate\" before A's credit lands " +
					"(the interleaver runs B between A's claim and A's credit)"},
			{Families: []faults.Family{faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
				Why: "the window is marked before the claim: a second call on the same node, at the same instant, finds the " +
					"first call's mark (or its claim) and acks \"duplicate\" before the first call's credit lands"},
		},
	}
}

// NewCluster implements faults.Design.
func (Design) NewCluster() faults.Cluster { return &Cluster{m: make(map[ref.Fingerprint]ref.State)} }

// Cluster is the seed's MemStore: fingerprint -> state.
type Cluster struct {
	mu sync.Mutex
	m  map[ref.Fingerprint]ref.State
}

// begin is the seed's MemStore.Begin.
func (c *Cluster) begin(fp ref.Fingerprint) (ref.State, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[fp]; ok {
		return st, false
	}
	c.m[fp] = ref.StateGranted
	return ref.StateGranted, true
}

// commit is the seed's MemStore.Commit.
func (c *Cluster) commit(fp ref.Fingerprint, st ref.State) {
	c.mu.Lock()
	c.m[fp] = st
	c.mu.Unlock()
}

// NewNode implements faults.Cluster.
func (c *Cluster) NewNode(id int, env faults.Env) faults.Node {
	return &Node{c: c, env: env, win: ref.NewWindow(faults.WindowTTL, 4)}
}

// Node is one seed settler with its own window.
type Node struct {
	c   *Cluster
	env faults.Env
	win *ref.Window
}

var _ faults.Node = (*Node)(nil)

// Deliver implements faults.Node: the seed's Settle, then the caller's
// credit when fresh.
func (n *Node) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	// The seed's FingerprintOf of the settlement's identity: the first 64
	// bits of the key ref uses, so both designs name a settlement alike.
	fp := refdesign.KeyOf(s).Fingerprint()
	// Layer 1, verbatim: Put first, before anything durable happened.
	if _, existed := n.win.Put(uint64(fp), uint64(ref.StateDelivered), now); existed {
		return faults.AckDuplicate, nil
	}
	var created bool
	if err := n.env.Durable("claim", func() error {
		_, created = n.c.begin(fp)
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	if !created {
		return faults.AckDuplicate, nil
	}
	// The seed's Commit has no error; its caller credits on fresh=true
	// whatever happened here.
	_ = n.env.Durable("commit", func() error {
		n.c.commit(fp, ref.StateDelivered)
		return nil
	})
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}
