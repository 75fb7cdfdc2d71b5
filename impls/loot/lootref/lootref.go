// Package lootref runs ref/loot's Service as a loot design of the proof
// harness: the row "loot-ref" of the loot matrix (Design, on ref/loot's
// in-memory store, ref/loot/memory, with the world's lock service and
// inventory), the same row on a store and lock the caller opened
// (OnStore: a user's lootprops.TestDesign on their own database; OnSlots:
// one store per run in flight, as `onceproof matrix -subject loot -store`
// opens them; NewCluster: one run's cluster on a store), and the node the
// other rows on the reference build (Config, New, Node): the design's
// loot.Store, lock and inventory reached through the node's
// lootfaults.Env, one Env call per store method, lock call and delivery,
// and requests answered from the Service's errors. A design on the
// reference is its store and, for a shortcut, the one part it swaps.
// Design's declaration says why the row holds.
package lootref

import (
	"context"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// Name is the design's matrix row.
const Name = "loot-ref"

// Design is the loot reference.
type Design struct{}

var _ engine.Declarer = Design{}

// Name implements lootfaults.Design.
func (Design) Name() string { return Name }

// Declare implements engine.Declarer: loot-ref holds in every family.
func (Design) Declare() engine.Declaration {
	return engine.Declaration{Doc: "ref/loot's Service (source 004 with the departures of DESIGN.md, \"Loot allocation\") on its " +
		"in-memory store, the world's lock (SET NX PX, a compare-and-delete release) and inventory (keyed by grant number). " +
		"It holds everywhere: a claim is judged (member, CLAIMING, before the deadline by the database's clock) in its own " +
		"write, so none lands after the freeze or from outside; one conditional write (the settle CAS, with the deadline) " +
		"decides who settles and bumps a fence that refuses a stalled settler's record; the result, the PENDING grants and " +
		"the snapshot are one write, and Cancel is refused once it landed; ranking ends on the player id; every delivery, " +
		"the settler's and compensation's, uses the recorded grant number, which the inventory applies once; and a session " +
		"a dead settler left SETTLING is taken over after its lease by Recover, which then delivers what is pending."}
}

// NewCluster implements lootfaults.Design: a fresh memory store on the
// database's clock.
func (Design) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return NewCluster(memory.NewStore(db.Now), db, nil)
}

// Store is what the row runs on: a loot.Store the world can also read as
// an auditor.
type Store interface {
	loot.Store
	loot.Reader
}

// NewCluster is the row's cluster on st, a fresh or emptied store (one per
// run): the same Service, lock, inventory and Env calls whatever the
// store. setClock, if not nil, runs inside every store call before it
// (EnvStore.Sync) with db's time: where a real database's test clock is
// moved to the world's database time (a store that reads db itself, as
// ref/loot/memory's does, needs none).
func NewCluster(st Store, db lootfaults.Clock, setClock func(ctx context.Context, now time.Time) error) lootfaults.Cluster {
	c := &cluster{store: st}
	if setClock != nil {
		c.sync = func(ctx context.Context) error { return setClock(ctx, db.Now()) }
	}
	return c
}

type cluster struct {
	store  Store
	sync   func(context.Context) error
	tokens Tokens
}

func (c *cluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node {
	return New(Config(env, EnvStore{Env: env, Inner: c.store, Sync: c.sync}.Wrap(), &c.tokens))
}

func (c *cluster) Read(no string) lootfaults.Record { return Read(c.store, no) }
