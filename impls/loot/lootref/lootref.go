// Package lootref is the row "loot-ref" of the loot matrix: ref/loot's
// Service on its in-memory store (ref/loot/memory), with the world's lock
// service and inventory, every store method, lock call and delivery one
// call through the world's Env. Its declaration says why it holds.
package lootref

import (
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/impls/loot/internal/svcnode"
	"github.com/onceproof/onceproof/lootworld"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// Name is the design's matrix row.
const Name = "loot-ref"

// Design is the loot reference.
type Design struct{}

var _ engine.Declarer = Design{}

// Name implements lootworld.Design.
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

// NewCluster implements lootworld.Design: a fresh memory store on the
// database's clock.
func (Design) NewCluster(db lootworld.Clock) lootworld.Cluster {
	return &cluster{store: memory.NewStore(db.Now)}
}

type cluster struct {
	store  *memory.Store
	tokens svcnode.Tokens
}

func (c *cluster) NewNode(_ int, env lootworld.Env) lootworld.Node {
	return svcnode.New(svcnode.Config(env, svcnode.Store{Env: env, Inner: c.store}, &c.tokens))
}

func (c *cluster) Read(no string) lootworld.Record { return svcnode.Read(c.store, no) }
