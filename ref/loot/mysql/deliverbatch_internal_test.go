package mysql

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/coalesce"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
)

// A batch of DeliverBatch calls, one of which names a grant never
// recorded: that call alone is loot.ErrNotFound and applies nothing (its
// recorded grant stays PENDING, with no ledger row); the others apply,
// each answered the grants as the database holds them after, a number
// shared by two calls delivered once. It costs two round trips: the
// shared one, whose guard (every number recorded) refuses, and one for
// the calls left, all of whose numbers it found. A batch of good calls is
// one round trip.
func TestDeliverCallsFailOnlyTheCallWithAnUnknownNumber(t *testing.T) {
	reproduce := "; reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 ./ref/loot/mysql -run '^" + t.Name() + "$'"
	s, sent := deliverWorld(t, "A1", "A2", "B1", "C1", "C2", "D1")
	qs := [][]string{{"A1", "A2"}, {"B1", "NOPE"}, {"C1"}, {"A2", "C2"}}
	rs := make([]coalesce.Result[[]loot.Grant], len(qs))
	before := sent.Load()
	s.deliverCalls(t.Context(), qs, rs)
	if n := sent.Load() - before; n != 2 {
		t.Errorf("the batch of %d calls, one with a number never recorded, cost %d round trips, want 2%s", len(qs), n, reproduce)
	}
	for i, q := range qs {
		if i == 1 {
			if !errors.Is(rs[i].Err, loot.ErrNotFound) || rs[i].Val != nil {
				t.Errorf("call %d %v = %v, %v; want loot.ErrNotFound%s", i, q, rs[i].Val, rs[i].Err, reproduce)
			}
			continue
		}
		if rs[i].Err != nil {
			t.Errorf("call %d %v = %v%s", i, q, rs[i].Err, reproduce)
		}
		held := heldGrants(t, s, q...)
		if !slices.Equal(rs[i].Val, held) {
			t.Errorf("call %d %v answered %v; the database holds %v%s", i, q, rs[i].Val, held, reproduce)
		}
	}
	wantState(t, s, reproduce, map[string]string{"A1": "SUCCESS 1", "A2": "SUCCESS 1", "B1": "PENDING 0", "C1": "SUCCESS 1", "C2": "SUCCESS 1", "D1": "PENDING 0"})
	before = sent.Load()
	rs = make([]coalesce.Result[[]loot.Grant], 2) // as the batcher hands them over: zero
	s.deliverCalls(t.Context(), [][]string{{"B1"}, {"D1", "A1"}}, rs)
	if n := sent.Load() - before; n != 1 || rs[0].Err != nil || rs[1].Err != nil {
		t.Errorf("a batch of 2 good calls: %v, %v in %d round trips, want no error in 1%s", rs[0].Err, rs[1].Err, n, reproduce)
	}
	wantState(t, s, reproduce, map[string]string{"A1": "SUCCESS 1", "B1": "SUCCESS 1", "D1": "SUCCESS 1"})
}

// deliverWorld is a Store on a new database with the grants nos recorded
// PENDING (rows written directly: delivery reads nothing else), and the
// count of packets its connections sent (one per round trip: bench_test's
// writes).
func deliverWorld(t *testing.T, nos ...string) (*Store, *atomic.Int64) {
	t.Helper()
	var sent atomic.Int64
	var d net.Dialer
	s, err := Open(t.Context(), testserver.MariaDB(t), Options{Config: func(c *mysql.Config) {
		c.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			return countedConn{c, &sent}, err
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.db.SetMaxOpenConns(1) // so the count never includes a new connection's handshake
	for i, no := range nos {
		if _, err := s.db.ExecContext(t.Context(), `INSERT INTO loot_grant
			(grant_no, session_no, player_id, loot_code, quantity, grant_rank, status, lease_until, created_at)
			VALUES (?, 'S', ?, 'L', 1, ?, 'PENDING', NOW(6), NOW(6))`, no, i+1, i+1); err != nil {
			t.Fatal(err)
		}
	}
	return s, &sent
}

type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

// heldGrants reads the grants nos as the database holds them.
func heldGrants(t *testing.T, s *Store, nos ...string) []loot.Grant {
	t.Helper()
	out := make([]loot.Grant, len(nos))
	for i, no := range nos {
		var g nullGrant
		if err := s.db.QueryRowContext(t.Context(), s.q.readGrant, no).Scan(g.dest()...); err != nil {
			t.Fatalf("grant %s: %v", no, err)
		}
		out[i] = g.grant()
	}
	return out
}

// wantState checks each grant's status and ledger rows ("SUCCESS 1").
func wantState(t *testing.T, s *Store, reproduce string, want map[string]string) {
	t.Helper()
	for no, w := range want {
		var st string
		var n int
		if err := s.db.QueryRowContext(t.Context(), `SELECT g.status, (SELECT COUNT(*) FROM loot_inventory i WHERE i.grant_no = g.grant_no)
			FROM loot_grant g WHERE g.grant_no = ?`, no).Scan(&st, &n); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join([]string{st, fmt.Sprint(n)}, " "); got != w {
			t.Errorf("grant %s: %s, want %s (status, ledger rows)%s", no, got, w, reproduce)
		}
	}
}
