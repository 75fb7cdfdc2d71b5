package mysql_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestDeliverCallsFailOnlyTheCallWithAnUnknownNumber: a batch of
// DeliverBatch calls (Options.Batch's), one of which names a grant never
// recorded: that call alone is loot.ErrNotFound and applies nothing (its
// recorded grant stays PENDING, with no ledger row); the others apply,
// each answered the grants as the database holds them after, a number
// shared by two calls delivered once. It costs two round trips: the
// shared one, whose guard (every number recorded) refuses, and one for
// the calls left, all of whose numbers it found. A batch of good calls is
// one round trip.
func TestDeliverCallsFailOnlyTheCallWithAnUnknownNumber(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 ./ref/loot/mysql -run '^" + t.Name() + "$'"
	ctx := t.Context()
	var sent writes
	s, err := mysql.Open(ctx, testserver.MariaDB(t), mysql.Options{Config: sent.count})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.DB().SetMaxOpenConns(1) // so the count never includes a new connection's handshake
	for i, no := range []string{"A1", "A2", "B1", "C1", "C2", "D1"} {
		if _, err := s.DB().ExecContext(ctx, `INSERT INTO loot_grant
			(grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, lease_until, created_at)
			VALUES (?, 'S', ?, 'L', 1, ?, 'PENDING', NOW(6), NOW(6))`, no, i+1, i+1); err != nil {
			t.Fatal(err)
		}
	}
	qs := [][]string{{"A1", "A2"}, {"B1", "NOPE"}, {"C1"}, {"A2", "C2"}}
	before := sent.n.Load()
	rs := s.DeliverCalls(ctx, qs)
	if n := sent.n.Load() - before; n != 2 {
		t.Errorf("the batch of %d calls, one with a number never recorded, cost %d round trips, want 2%s", len(qs), n, reproduce)
	}
	for i, q := range qs {
		if i == 1 {
			if !errors.Is(rs[i].Err, loot.ErrNotFound) || rs[i].Val != nil {
				t.Errorf("call %d %v = %v, %v; want loot.ErrNotFound%s", i, q, rs[i].Val, rs[i].Err, reproduce)
			}
			continue
		}
		if held := heldGrants(t, s, q...); rs[i].Err != nil || !slices.Equal(rs[i].Val, held) {
			t.Errorf("call %d %v = %v, %v; the database holds %v%s", i, q, rs[i].Val, rs[i].Err, held, reproduce)
		}
	}
	wantState(t, s, reproduce, map[string]string{"A1": "SUCCESS 1", "A2": "SUCCESS 1", "B1": "PENDING 0", "C1": "SUCCESS 1", "C2": "SUCCESS 1", "D1": "PENDING 0"})
	before = sent.n.Load()
	rs = s.DeliverCalls(ctx, [][]string{{"B1"}, {"D1", "A1"}})
	if n := sent.n.Load() - before; n != 1 || rs[0].Err != nil || rs[1].Err != nil {
		t.Errorf("a batch of 2 good calls: %v, %v in %d round trips, want no error in 1%s", rs[0].Err, rs[1].Err, n, reproduce)
	}
	wantState(t, s, reproduce, map[string]string{"A1": "SUCCESS 1", "B1": "SUCCESS 1", "D1": "SUCCESS 1"})
}

// heldGrants reads the grants nos as the database holds them.
func heldGrants(t *testing.T, s *mysql.Store, nos ...string) []loot.Grant {
	t.Helper()
	out := make([]loot.Grant, len(nos))
	for i, no := range nos {
		g := &out[i]
		if err := s.DB().QueryRowContext(t.Context(), `SELECT grant_no, session_no, player_id, loot_code, quantity, grant_rank,
			status, retry_count, lease_until FROM loot_grant WHERE grant_no = ?`, no).Scan(
			&g.No, &g.Session, &g.Player, &g.Loot, &g.Quantity, &g.Rank, &g.Status, &g.Attempts, &g.LeaseUntil); err != nil {
			t.Fatalf("grant %s: %v", no, err)
		}
	}
	return out
}

// wantState checks each grant's status and ledger rows ("SUCCESS 1").
func wantState(t *testing.T, s *mysql.Store, reproduce string, want map[string]string) {
	t.Helper()
	for no, w := range want {
		var st string
		var n int
		if err := s.DB().QueryRowContext(t.Context(), `SELECT g.status, (SELECT COUNT(*) FROM loot_inventory i WHERE i.grant_no = g.grant_no)
			FROM loot_grant g WHERE g.grant_no = ?`, no).Scan(&st, &n); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%s %d", st, n); got != w {
			t.Errorf("grant %s: %s, want %s (status, ledger rows)%s", no, got, w, reproduce)
		}
	}
}
