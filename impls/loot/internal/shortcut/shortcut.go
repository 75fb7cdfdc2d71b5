// Package shortcut builds the loot rows that break one rule of the
// reference: ref/loot's Service on the table database (package table) with
// the table's Rules, the application's clock, or one part of the node's
// wiring swapped. The rows are the table in variants.go, each a Row value
// with its declaration.
package shortcut

import (
	"sync/atomic"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/internal/table"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/ref/loot"
)

// Row is one shortcut row.
type Row struct {
	// Row is the matrix row's name; Decl its declaration.
	Row  string
	Decl engine.Declaration
	// Rules are the table's broken rules.
	Rules table.Rules
	// AppClock judges deadlines by the node's clock instead of the
	// database's.
	AppClock bool
	// Wire, if set, swaps a part of the node's wiring c.
	Wire func(c *loot.Config, w Wiring)
}

// Wiring is what a Wire may use: the node's Env, whether the node is
// running Recover (compensation) now, and fresh delivery keys: what a UUID
// is to the inventory, numbered per cluster so that a run replays.
type Wiring struct {
	Env          lootfaults.Env
	Compensating *atomic.Bool
	NewKey       func() string
}

var (
	_ lootfaults.Design = Row{}
	_ engine.Declarer   = Row{}
)

// Name implements lootfaults.Design.
func (r Row) Name() string { return r.Row }

// Declare implements engine.Declarer.
func (r Row) Declare() engine.Declaration { return r.Decl }

// NewCluster implements lootfaults.Design.
func (r Row) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &cluster{row: r, db: table.NewDB(db.Now)}
}

type cluster struct {
	row    Row
	db     *table.DB
	tokens lootref.Tokens
	// seq numbers the keys a re-keying row makes up.
	seq atomic.Uint64
}

func (c *cluster) newKey() string { return "uuid-" + itoa(c.seq.Add(1)) }

// Rekeyed is a Wire that delivers a grant under a fresh key whenever
// fresh says so, and under its recorded grant number otherwise.
func Rekeyed(fresh func(w Wiring) bool) func(*loot.Config, Wiring) {
	return func(c *loot.Config, w Wiring) {
		c.Inventory = lootref.Inventory{Env: w.Env, Key: func(g loot.Grant) string {
			if fresh(w) {
				return w.NewKey()
			}
			return g.No
		}}
	}
}

func itoa(n uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			return string(b[i:])
		}
	}
}

func (c *cluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node {
	st := table.Store{DB: c.db, Env: env, Rules: c.row.Rules}
	if c.row.AppClock {
		st.Clock = env.Now
	}
	cfg := lootref.Config(env, st, &c.tokens)
	n := lootref.Node{Compensating: &atomic.Bool{}}
	if c.row.Wire != nil {
		c.row.Wire(&cfg, Wiring{Env: env, Compensating: n.Compensating, NewKey: c.newKey})
	}
	n.Svc = lootref.New(cfg).Svc
	return n
}

func (c *cluster) Read(no string) lootfaults.Record { return lootref.Read(table.Store{DB: c.db}, no) }
