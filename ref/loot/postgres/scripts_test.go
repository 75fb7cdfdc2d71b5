package postgres_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/postgres"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// The source document's two verification scripts (its 6.2 and 6.3), as Go:
// the same burst of identical requests, each from its own service instance
// (its own one-connection pool and Redis client: separate connections as
// xargs -P gives separate curl processes), on the real clock, and its own
// SQL check of the outcome.

// instance is one service instance with its own connections.
func (w *world) instance(t *testing.T) *loot.Service {
	t.Helper()
	st := openStore(t, w.url, postgres.Options{Config: func(c *pgxpool.Config) { c.MaxConns = 1 }})
	t.Cleanup(func() { st.Close() })
	lock, err := redis.Open(t.Context(), w.redis, redis.Options{Prefix: w.prefix, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lock.Close() })
	svc, err := loot.New(loot.Config{Store: st, Inventory: st.Inventory(countEffect), Fairness: memory.NewHistory(), Lock: lock})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// TestSourceScriptConcurrentIntent is the document's concurrent_intent.sh:
// 20 identical NEED claims of player 1001 at once; then SELECT COUNT(*)
// FROM loot_intent (here loot_claim) WHERE session_no = ... must be 1.
func TestSourceScriptConcurrentIntent(t *testing.T) {
	w := newWorld(t, false)
	spec := loot.Spec{No: "S202401", Dungeon: "ABYSS-3", Loot: "SWORD_001", Quantity: 1, Deadline: w.now().Add(time.Minute),
		Rule: loot.RuleCount, Members: []loot.PlayerID{1001, 1002, 1003}}
	if _, _, err := w.st.Open(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.st.StartClaiming(t.Context(), spec.No); err != nil {
		t.Fatal(err)
	}
	svcs := make([]*loot.Service, 20)
	for i := range svcs {
		svcs[i] = w.instance(t)
	}
	for i, err := range loottest.Together(len(svcs), func(i int) error {
		_, err := svcs[i].Claim(t.Context(), loot.Caller{Player: 1001}, loot.ClaimRequest{Session: spec.No, Intent: loot.Need})
		return err
	}) {
		if err != nil {
			t.Errorf("claim %d: %v", i, err)
		}
	}
	var n int
	if err := w.pool.QueryRow(t.Context(), `SELECT count(*) FROM loot_claim WHERE session_no = $1`, spec.No).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("intent_count = %d after 20 identical claims, want 1", n)
	}
}

// TestSourceScriptConcurrentSettle is the document's concurrent settle
// script: 10 settles of one session at once, once it is due; then SELECT
// COUNT(*) FROM loot_grant WHERE session_no = ... must equal the quantity
// (the document checks quantity 1; 3 too, here), and each item lands once.
func TestSourceScriptConcurrentSettle(t *testing.T) {
	for _, quantity := range []int{1, 3} {
		t.Run(fmt.Sprintf("quantity=%d", quantity), func(t *testing.T) {
			w := newWorld(t, false)
			no := "S202401"
			w.claiming(no, quantity, team(5), 300*time.Millisecond)
			svcs := make([]*loot.Service, 10)
			for i := range svcs {
				svcs[i] = w.instance(t)
			}
			waitDue(t, w, no)
			won := 0
			for i, err := range loottest.Together(len(svcs), func(i int) error {
				_, err := svcs[i].Settle(t.Context(), no)
				return err
			}) {
				switch {
				case err == nil:
					won++
				case !errors.Is(err, loot.ErrAlreadySettling) && !errors.Is(err, loot.ErrAlreadySettled):
					t.Errorf("settle %d: %v", i, err)
				}
			}
			var n int
			if err := w.pool.QueryRow(t.Context(), `SELECT count(*) FROM loot_grant WHERE session_no = $1`, no).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if won != 1 || n != quantity {
				t.Fatalf("%d of 10 concurrent settles won, grant_count = %d; want 1 and %d", won, n, quantity)
			}
			w.checkExactlyOnce(no, quantity)
		})
	}
}

// waitDue waits until session no's deadline has passed by the database's
// clock (the only clock that judges it).
func waitDue(t *testing.T, w *world, no string) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		var due bool
		if err := w.pool.QueryRow(t.Context(), `SELECT deadline_at <= now() FROM loot_session WHERE session_no = $1`, no).Scan(&due); err != nil {
			t.Fatal(err)
		}
		if due {
			return
		}
	}
	t.Fatalf("%s not due after 10s", no)
}
