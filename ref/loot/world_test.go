package loot_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// t0 is the tests' origin on every clock.
var t0 = time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)

// claimWindow is the tests' claim window (the source document's
// claim-window-seconds: 60 at most).
const claimWindow = 30 * time.Second

// world is the durable side every node of a test shares: the memory store
// on the database's clock, a lock service on its own clock, the history.
type world struct {
	t       *testing.T
	db      *memory.Clock
	lockNow *memory.Clock
	store   *memory.Store
	lock    *memory.Lock
	history *memory.History
}

func newWorld(t *testing.T) *world {
	db, lc := memory.NewClock(t0), memory.NewClock(t0)
	return &world{t: t, db: db, lockNow: lc, store: memory.NewStore(db.Now), lock: memory.NewLock(lc.Now), history: memory.NewHistory()}
}

// node builds a settler node on the world (a fresh process: no state but
// the world's). cfg's zero fields get the world's parts.
func (w *world) node(cfg loot.Config) *loot.Service {
	w.t.Helper()
	if cfg.Store == nil {
		cfg.Store = w.store
	}
	if cfg.Inventory == nil {
		cfg.Inventory = w.store.Inventory()
	}
	if cfg.Fairness == nil {
		cfg.Fairness = w.history
	}
	if cfg.Lock == nil {
		cfg.Lock = w.lock
	}
	if cfg.Tokens == nil {
		cfg.Tokens = bytes.NewReader(bytes.Repeat([]byte{7}, 1<<12)) // seeded: tokens 0707...
	}
	svc, err := loot.New(cfg)
	if err != nil {
		w.t.Fatalf("loot.New: %v", err)
	}
	return svc
}

// advance moves the database's and the lock service's clocks together.
func (w *world) advance(d time.Duration) {
	w.db.Advance(d)
	w.lockNow.Advance(d)
}

// claiming opens session no (deadline one claimWindow from the database's
// now) and starts claiming.
func (w *world) claiming(svc *loot.Service, no string, quantity int, rule loot.RuleVersion, members ...loot.PlayerID) loot.Session {
	w.t.Helper()
	ctx := w.t.Context()
	_, err := svc.Open(ctx, loot.Spec{
		No: no, Dungeon: "ABYSS-3", Loot: "RING-7", Quantity: quantity,
		Deadline: w.db.Now().Add(claimWindow), Rule: rule, Members: members,
	})
	if err != nil {
		w.t.Fatalf("Open(%s): %v", no, err)
	}
	sess, err := svc.StartClaiming(ctx, no)
	if err != nil {
		w.t.Fatalf("StartClaiming(%s): %v", no, err)
	}
	return sess
}

// claim makes p's claim through svc, failing the test on an error.
func (w *world) claim(svc *loot.Service, no string, p loot.PlayerID, in loot.Intent) loot.Claim {
	w.t.Helper()
	c, err := svc.Claim(w.t.Context(), loot.Caller{Player: p}, loot.ClaimRequest{Session: no, Intent: in})
	if err != nil {
		w.t.Fatalf("Claim(%s, %d, %s): %v", no, p, in, err)
	}
	return c
}

// holders returns who holds how many RING-7 among ps.
func (w *world) holders(ps ...loot.PlayerID) map[loot.PlayerID]int {
	out := map[loot.PlayerID]int{}
	for _, p := range ps {
		if n := w.store.Holding(p, "RING-7"); n > 0 {
			out[p] = n
		}
	}
	return out
}
