package seedservice

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// reproduce is the command that reruns test name.
func reproduce(name string) string {
	return fmt.Sprintf("ONCEPROOF_REQUIRE_SERVICES=1 go test -count=1 -run '^%s$' ./impls/loot/seedservice", name)
}

// hour is the claim window sessions are opened with: endClaimWindow ends
// it, so no test waits for a deadline.
const hour = 3600

// sessionRow is a loot_session row.
type sessionRow struct {
	status             string
	total, allocated   int
	version            int
	deadline, openedAt time.Time
}

func (s *env) session(no string) sessionRow {
	s.t.Helper()
	var r sessionRow
	err := s.db.QueryRow("SELECT status, total_quantity, allocated_quantity, version, deadline_at, created_at FROM loot_session WHERE session_no = ?", no).
		Scan(&r.status, &r.total, &r.allocated, &r.version, &r.deadline, &r.openedAt)
	if err != nil {
		s.t.Fatalf("session %s: %v", no, err)
	}
	return r
}

// intentRow is a loot_intent row.
type intentRow struct {
	player         int64
	kind           string
	priority, fair int
	createdAt      time.Time
}

func (s *env) intents(no string) []intentRow {
	s.t.Helper()
	rows, err := s.db.Query("SELECT player_id, intent_type, priority, fair_score, created_at FROM loot_intent WHERE session_no = ? ORDER BY id", no)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var out []intentRow
	for rows.Next() {
		var r intentRow
		if err := rows.Scan(&r.player, &r.kind, &r.priority, &r.fair, &r.createdAt); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// grantRow is a loot_grant row.
type grantRow struct {
	grantNo string
	player  int64
	loot    string
	status  string
}

func (s *env) grants(no string) []grantRow {
	s.t.Helper()
	rows, err := s.db.Query("SELECT grant_no, player_id, loot_code, status FROM loot_grant WHERE session_no = ? ORDER BY id", no)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rows.Close()
	var out []grantRow
	for rows.Next() {
		var r grantRow
		if err := rows.Scan(&r.grantNo, &r.player, &r.loot, &r.status); err != nil {
			s.t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// answer checks one answer's status and body fields.
func answer(t *testing.T, what string, status int, body map[string]any, wantStatus int, want map[string]any) {
	t.Helper()
	if status != wantStatus {
		t.Fatalf("%s: status %d %v, want %d %v; reproduce: %s", what, status, body, wantStatus, want, reproduce(t.Name()))
	}
	for k, v := range want {
		if fmt.Sprint(body[k]) != fmt.Sprint(v) {
			t.Fatalf("%s: %s = %v in %v, want %v; reproduce: %s", what, k, body[k], body, v, reproduce(t.Name()))
		}
	}
}

// concurrently runs f n times at once and waits for all.
func concurrently(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}

// TestDocumentsVerificationScriptsGiveItsExpectedResults runs section 6 of
// the document against the service: 6.1's two curls (a NEED claim
// accepted; a settle before the deadline "settle triggered" with nothing
// changed), 6.2's 20 identical claims at once (one row), and 6.3's 10
// settles at once after the deadline on two instances (one grant, the
// session CLOSED with allocated_quantity 1), then the compensation job's
// delivery under the grant number.
func TestDocumentsVerificationScriptsGiveItsExpectedResults(t *testing.T) {
	s := startService(t)
	const no = "S202401"
	st, body := s.post("/api/loot/sessions", map[string]any{"sessionNo": no, "lootCode": "SWORD_001", "quantity": 1, "claimWindowSeconds": hour})
	answer(t, "open", st, body, 200, map[string]any{"code": 0, "created": true})

	// 6.1
	st, body = s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 1001, "intentType": "NEED", "fairScore": 3})
	answer(t, "6.1 intent", st, body, 200, map[string]any{"code": 0, "accepted": true})
	settle := map[string]any{"sessionNo": no, "lootCode": "SWORD_001", "quantity": 1}
	st, body = s.post("/api/loot/settle", settle)
	answer(t, "6.1 settle before the deadline", st, body, 200, map[string]any{"code": 0, "message": "settle triggered"})
	if r := s.session(no); r.status != "CLAIMING" || r.version != 0 || len(s.grants(no)) != 0 {
		t.Fatalf("after a settle before the deadline: session %+v, grants %v; want CLAIMING, version 0, none (lockForSettle matched nothing); reproduce: %s", r, s.grants(no), reproduce(t.Name()))
	}
	if s.lockHeld(no) {
		t.Fatalf("the settle left its Redis lock behind; reproduce: %s", reproduce(t.Name()))
	}

	// 6.2: fairScore 2, as the script sends: ON DUPLICATE KEY UPDATE
	// takes it, and keeps the first row's created_at.
	first := s.intents(no)
	concurrently(20, func(int) {
		st, body := s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 1001, "intentType": "NEED", "fairScore": 2})
		if st != 200 || body["accepted"] != true {
			t.Errorf("6.2 intent: %d %v, want 200 accepted", st, body)
		}
	})
	got := s.intents(no)
	if len(got) != 1 || got[0].player != 1001 || got[0].kind != "NEED" || got[0].priority != 10 || got[0].fair != 2 || !got[0].createdAt.Equal(first[0].createdAt) {
		t.Fatalf("6.2: intent rows %+v, want one: 1001 NEED priority 10 fair 2 created at %v; reproduce: %s", got, first[0].createdAt, reproduce(t.Name()))
	}

	// 6.3, the 10 settles spread over two instances on one database and
	// one Redis, as a deployment behind a load balancer runs them.
	other := s.env.start()
	s.endClaimWindow(no)
	concurrently(10, func(i int) {
		in := s.instance
		if i%2 == 1 {
			in = other
		}
		st, body := in.post("/api/loot/settle", settle)
		if st != 200 || body["message"] != "settle triggered" {
			t.Errorf("6.3 settle: %d %v, want 200 settle triggered", st, body)
		}
	})
	wantGrant := grantRow{no + ":1001:SWORD_001", 1001, "SWORD_001", "PENDING"}
	if r, g := s.session(no), s.grants(no); r.status != "CLOSED" || r.allocated != 1 || r.version != 2 || !slices.Equal(g, []grantRow{wantGrant}) {
		t.Fatalf("6.3: session %+v, grants %v; want CLOSED, allocated 1, version 2 (lockForSettle and markClosed), one grant %v; reproduce: %s", r, g, wantGrant, reproduce(t.Name()))
	}
	if s.lockHeld(no) {
		t.Fatalf("6.3 left the Redis lock behind; reproduce: %s", reproduce(t.Name()))
	}

	// The compensation job delivers the PENDING grant once, under its
	// grant number, and marks it SUCCESS; a second pass finds nothing.
	st, body = s.post("/api/loot/compensate", map[string]any{})
	answer(t, "compensate", st, body, 200, map[string]any{"code": 0, "pending": 1, "delivered": 1, "failed": 0})
	st, body = s.post("/api/loot/compensate", map[string]any{})
	answer(t, "compensate again", st, body, 200, map[string]any{"code": 0, "pending": 0, "delivered": 0})
	want := []delivery{{Key: wantGrant.grantNo, GrantNo: wantGrant.grantNo, SessionNo: no, LootCode: "SWORD_001", PlayerID: 1001, Quantity: 1}}
	if d := s.inv.deliveries(); !slices.Equal(d, want) {
		t.Fatalf("inventory deliveries %+v, want %+v; reproduce: %s", d, want, reproduce(t.Name()))
	}
	if g := s.grants(no); len(g) != 1 || g[0].status != "SUCCESS" {
		t.Fatalf("grant after delivery: %v, want SUCCESS; reproduce: %s", g, reproduce(t.Name()))
	}
}

// TestSettleRanksByTheDocumentsOrderAndKeepsItsDefects is the basic
// scenario with several players: a session of two items for a team of
// five, claims NEED, GREED and PASS with the fairness the clients send,
// and one from a player outside the team. The winners are selectRanked's
// first two (priority desc, fair_score asc, created_at asc): the two NEED
// claims, the fairer first. The outsider's claim is recorded and ranked
// (the document checks no team), a claim after the deadline is refused,
// and a repeated open is answered created false.
func TestSettleRanksByTheDocumentsOrderAndKeepsItsDefects(t *testing.T) {
	s := startService(t)
	const no, loot = "S202402", "RING_007"
	st, body := s.post("/api/loot/sessions", map[string]any{"sessionNo": no, "dungeonCode": "ABYSS_3", "lootCode": loot, "quantity": 2,
		"members": []int{1, 2, 3, 4, 5}, "claimWindowSeconds": hour})
	answer(t, "open", st, body, 200, map[string]any{"code": 0, "created": true})
	st, body = s.post("/api/loot/sessions", map[string]any{"sessionNo": no, "lootCode": "OTHER", "quantity": 9, "claimWindowSeconds": hour})
	answer(t, "open again", st, body, 200, map[string]any{"code": 1002, "created": false})

	claims := []struct {
		player int64
		kind   string
		fair   int
	}{
		{1, "GREED", 0}, {2, "NEED", 3}, {3, "NEED", 1}, {4, "PASS", 0}, {5, "GREED", 2}, {99, "GREED", 0},
	}
	for _, c := range claims {
		st, body := s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": c.player, "intentType": c.kind, "fairScore": c.fair})
		answer(t, fmt.Sprintf("claim of %d", c.player), st, body, 200, map[string]any{"code": 0, "accepted": true})
	}
	got := s.intents(no)
	prio := map[string]int{"NEED": 10, "GREED": 1, "PASS": 0}
	if len(got) != len(claims) {
		t.Fatalf("intent rows %+v, want one per claim (%d), the outsider's too; reproduce: %s", got, len(claims), reproduce(t.Name()))
	}
	for i, c := range claims {
		if r := got[i]; r.player != c.player || r.kind != c.kind || r.priority != prio[c.kind] || r.fair != c.fair {
			t.Fatalf("intent row %d: %+v, want player %d %s priority %d fair %d; reproduce: %s", i, r, c.player, c.kind, prio[c.kind], c.fair, reproduce(t.Name()))
		}
	}

	s.endClaimWindow(no)
	st, body = s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 1, "intentType": "NEED", "fairScore": 0})
	answer(t, "claim after the deadline", st, body, 200, map[string]any{"code": 1001, "accepted": false})
	if r := s.intents(no)[0]; r.kind != "GREED" {
		t.Fatalf("a refused claim changed the row: %+v; reproduce: %s", r, reproduce(t.Name()))
	}
	st, body = s.post("/api/loot/settle", map[string]any{"sessionNo": no, "lootCode": loot, "quantity": 2})
	answer(t, "settle", st, body, 200, map[string]any{"code": 0, "message": "settle triggered"})
	want := []grantRow{{no + ":3:" + loot, 3, loot, "PENDING"}, {no + ":2:" + loot, 2, loot, "PENDING"}}
	if r, g := s.session(no), s.grants(no); r.status != "CLOSED" || r.allocated != 2 || !slices.Equal(g, want) {
		t.Fatalf("after the settle: session %+v, grants %v; want CLOSED, allocated 2, grants %v (NEED before GREED, fair 1 before fair 3); reproduce: %s", r, g, want, reproduce(t.Name()))
	}
	st, body = s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 5, "intentType": "NEED", "fairScore": 0})
	answer(t, "claim on a CLOSED session", st, body, 200, map[string]any{"code": 1001, "accepted": false})

	st, body = s.post("/api/loot/compensate", map[string]any{})
	answer(t, "compensate", st, body, 200, map[string]any{"code": 0, "pending": 2, "delivered": 2})
	var keys []string
	for _, d := range s.inv.deliveries() {
		keys = append(keys, d.Key)
	}
	if wantKeys := []string{want[0].grantNo, want[1].grantNo}; !slices.Equal(keys, wantKeys) {
		t.Fatalf("inventory keys %v, want %v; reproduce: %s", keys, wantKeys, reproduce(t.Name()))
	}
}

// TestCancelEndsASessionThatThenNeitherTakesClaimsNorSettles: cancel (an
// addition) moves a CLAIMING session to CANCELED once; a claim is then
// refused, a settle after the deadline writes nothing, and a second cancel
// is answered canceled false.
func TestCancelEndsASessionThatThenNeitherTakesClaimsNorSettles(t *testing.T) {
	s := startService(t)
	const no = "S202403"
	st, body := s.post("/api/loot/sessions", map[string]any{"sessionNo": no, "lootCode": "AXE", "quantity": 1, "claimWindowSeconds": hour})
	answer(t, "open", st, body, 200, map[string]any{"code": 0})
	st, body = s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 7, "intentType": "NEED"})
	answer(t, "claim", st, body, 200, map[string]any{"accepted": true})
	st, body = s.post("/api/loot/cancel", map[string]any{"sessionNo": no})
	answer(t, "cancel", st, body, 200, map[string]any{"code": 0, "canceled": true})
	st, body = s.post("/api/loot/cancel", map[string]any{"sessionNo": no})
	answer(t, "cancel again", st, body, 200, map[string]any{"code": 1001, "canceled": false})
	st, body = s.post("/api/loot/intent", map[string]any{"sessionNo": no, "playerId": 8, "intentType": "NEED"})
	answer(t, "claim on a canceled session", st, body, 200, map[string]any{"code": 1001, "accepted": false})
	s.endClaimWindow(no)
	st, body = s.post("/api/loot/settle", map[string]any{"sessionNo": no, "lootCode": "AXE"})
	answer(t, "settle", st, body, 200, map[string]any{"message": "settle triggered"})
	if r, g := s.session(no), s.grants(no); r.status != "CANCELED" || len(g) != 0 {
		t.Fatalf("canceled session after a settle: %+v, grants %v; want CANCELED and none; reproduce: %s", r, g, reproduce(t.Name()))
	}
}

// TestBadRequestsAnswerAsSpringBootDoes: the answers service mode's spec
// maps besides the controller's own: an unknown path 404, another method
// 405, no JSON content type 415, a body that is not a JSON object (or is
// nested deeper than the parser's stack) 400,
// and the controller's own parse failures (no playerId: parseLong("null"))
// 500, each with Spring Boot's error body.
func TestBadRequestsAnswerAsSpringBootDoes(t *testing.T) {
	s := startService(t)
	cases := []struct {
		what, method, path, ctype, body string
		status                          int
	}{
		{"unknown path", "POST", "/api/loot/nothing", "application/json", "{}", 404},
		{"GET of a POST endpoint", "GET", "/api/loot/intent", "", "", 405},
		{"no content type", "POST", "/api/loot/intent", "text/plain", `{"sessionNo":"S"}`, 415},
		{"not JSON", "POST", "/api/loot/intent", "application/json", `{"sessionNo":`, 400},
		{"a JSON array", "POST", "/api/loot/intent", "application/json", `[1]`, 400},
		// 2^17 levels: deeper than a request thread's stack recurses.
		{"nesting past the stack", "POST", "/api/loot/intent", "application/json", `{"a":` + strings.Repeat("[", 1<<17) + strings.Repeat("]", 1<<17) + `}`, 400},
		{"no playerId", "POST", "/api/loot/intent", "application/json", `{"sessionNo":"S"}`, 500},
		{"a fractional fairScore", "POST", "/api/loot/intent", "application/json", `{"sessionNo":"S","playerId":1,"fairScore":1.5}`, 500},
	}
	for _, c := range cases {
		st, body := s.send(c.method, c.path, c.ctype, []byte(c.body))
		answer(t, c.what, st, body, c.status, map[string]any{"status": c.status, "path": c.path})
	}
}
