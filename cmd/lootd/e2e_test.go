package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The source document's scripts (section 6) and its warnings (section 9:
// "the application killed mid-settle", a settler that outlives its lock),
// against three lootd processes on one database: MariaDB with no lock
// (the CAS alone decides), and PostgreSQL with the Redis lock.

// members is the team of every e2e session.
var members = []int64{1001, 1002, 1003, 1004}

// e2eSpec is a session of the e2e tests: quantity items for members, a
// window of window seconds.
func e2eSpec(no string, quantity, window int) openRequest {
	s := spec(no, quantity, members...)
	s.ClaimWindowSeconds = window
	return s
}

// TestE2EDocumentScripts runs section 6.2 (20 concurrent identical claims
// of player 1001) and 6.3 (10 concurrent settles) on one session, the
// requests spread over three instances, with the background loops slowed
// to an hour so the settles race only one another; and the document's
// SQL checks.
func TestE2EDocumentScripts(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		c := startCluster(t, clusterOpts{store: store, nodes: 3, settleEvery: time.Hour, compensate: time.Hour, lockTTL: 10 * time.Second})
		const no = "S202401"
		deadline := c.open(c.nodes[0], e2eSpec(no, 2, 3))

		var wg sync.WaitGroup
		statuses := make([]int, 20)
		created := make([]any, len(statuses))
		for i := range statuses {
			wg.Go(func() {
				var out map[string]any
				statuses[i], out = c.claim(c.nodes[i%3], 1001, no, "NEED")
				created[i] = out["created"]
			})
		}
		wg.Wait()
		firsts := 0
		for i, st := range statuses {
			if st != 200 {
				t.Errorf("claim %d: status %d, want 200 (a repeat is accepted, not an error)", i, st)
			}
			if created[i] == true {
				firsts++
			}
		}
		// One row per (session, player), inserted by exactly one of the 20
		// statements: that one answers created true, the 19 others false.
		if firsts != 1 {
			t.Errorf("claims answered created=true: %d of %d (%v), want 1", firsts, len(statuses), created)
		}
		// SELECT COUNT(*) AS intent_count FROM loot_intent WHERE session_no = 'S202401'
		if n := c.count("SELECT COUNT(*) FROM loot_intent WHERE session_no = ?", no); n != 1 {
			t.Fatalf("intent_count %d, want 1", n)
		}
		if store == "mariadb" { // the MySQL store counts a claim's requests
			if n := c.count("SELECT requests FROM loot_intent WHERE session_no = ?", no); n != 20 {
				t.Errorf("the claim row counts %d requests, want all 20 to have reached the store", n)
			}
		}
		for p, intent := range map[int64]string{1002: "GREED", 1003: "NEED", 1004: "PASS"} {
			if st, out := c.claim(c.nodes[int(p)%3], p, no, intent); st != 200 {
				t.Fatalf("claim of %d: %d %v", p, st, out)
			}
		}

		sleepUntil(deadline)
		outcomes := make([]string, 10)
		for i := range outcomes {
			wg.Go(func() {
				st, out := c.do("POST", c.nodes[i%3].internal+"/api/loot/settle", map[string]string{"sessionNo": no})
				outcomes[i] = fmt.Sprint(st, " ", out["outcome"], out["code"])
			})
		}
		wg.Wait()
		settled := 0
		for _, o := range outcomes {
			switch o {
			case "200 settled<nil>":
				settled++
			case "200 already_settled<nil>", "409 <nil>already_settling":
			default:
				t.Errorf("settle answered %q", o)
			}
		}
		if settled != 1 {
			t.Errorf("%d settles recorded the result, want exactly 1: %v", settled, outcomes)
		}
		// SELECT COUNT(*) AS grant_count FROM loot_grant WHERE session_no = 'S202401'
		s := c.waitDelivered(c.nodes[1], no, 10*time.Second)
		c.checkExactlyOnce(c.nodes[2], no, 2)
		gs := grantsOf(s)
		if gs[0]["playerId"] != 1001.0 || gs[1]["playerId"] != 1003.0 {
			t.Errorf("winners %v, want 1001 then 1003 (both NEED, 1001 claimed first)", gs)
		}
		if n := c.count("SELECT COUNT(*) FROM loot_session WHERE session_no = ? AND status = 'CLOSED' AND allocated_quantity = 2", no); n != 1 {
			t.Errorf("the session row is not CLOSED with allocated_quantity 2")
		}
	})
}

// TestE2EKillNineMidSettle kills the instance that holds a settle, first
// just after its CAS (the session SETTLING, nothing recorded), then just
// after it recorded the grants (CLOSED, grants PENDING, nothing
// delivered): the survivors take the first over once its lease ends, and
// compensate the second's grants; /metrics shows the backlog and its
// drain. The hold points make "mid-settle" exact (hooks_lootdtest.go);
// any instance may win the settle, and the one that logs the hold dies.
func TestE2EKillNineMidSettle(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		const lease = 3 * time.Second // the margin the checks made within it have on a loaded machine
		c := startCluster(t, clusterOpts{store: store, nodes: 3, settleEvery: 100 * time.Millisecond, compensate: 200 * time.Millisecond,
			lockTTL: lease, hold: "begin:KILLB-,record:KILLR-"})
		live := c.nodes

		for _, phase := range []struct{ no, point string }{{"KILLB-1", "begin"}, {"KILLR-1", "record"}} {
			deadline := c.open(live[0], e2eSpec(phase.no, 2, 2))
			for i, p := range members {
				intent := map[int64]string{1001: "NEED", 1002: "NEED", 1003: "GREED", 1004: "PASS"}[p]
				if st, out := c.claim(live[i%len(live)], p, phase.no, intent); st != 200 {
					t.Fatalf("claim of %d: %d %v", p, st, out)
				}
			}
			sleepUntil(deadline)
			holder := waitHold(t, live, phase.point, phase.no)
			var rest []*node
			for _, n := range live {
				if n != holder {
					rest = append(rest, n)
				}
			}
			if phase.point == "record" {
				// Recorded, undelivered, and the holder's lease keeps the
				// others off the grants: the backlog is exactly these two.
				if v, ok := c.metric(rest[0], "lootd_grants_pending"); !ok || v != 2 {
					t.Errorf("lootd_grants_pending on %s with the holder alive: %v (present %v), want 2", rest[0].name, v, ok)
				}
			}
			holder.kill9(t)
			live = rest
			s := c.waitDelivered(live[0], phase.no, 15*time.Second)
			c.checkExactlyOnce(live[len(live)-1], phase.no, 2)
			switch phase.point {
			case "begin":
				if s["fence"] != 2.0 {
					t.Errorf("%s closed under fence %v, want 2 (a takeover of the dead settler's)", phase.no, s["fence"])
				}
			case "record":
				for _, g := range grantsOf(s) {
					if g["attempts"].(float64) < 1 {
						t.Errorf("grant %v delivered without a compensation lease", g)
					}
				}
			}
		}
		last := live[0]
		if v, ok := c.metric(last, "lootd_grants_pending"); !ok || v != 0 {
			t.Errorf("lootd_grants_pending after compensation: %v (present %v), want 0", v, ok)
		}
		if v, _ := c.metric(last, `lootd_deliveries_total{path="compensation",result="ok"}`); v != 2 {
			t.Errorf("compensation deliveries on the last instance: %v, want the 2 grants the dead settler recorded", v)
		}
		if n := c.count("SELECT COUNT(*) FROM loot_session WHERE status NOT IN ('CLOSED', 'CANCELED')"); n != 0 {
			t.Errorf("%d sessions stuck", n)
		}
	})
}

// TestE2ESIGSTOPPastTheLease stops the instance holding a settle (just
// after its CAS) past its lease, lets another instance settle the session
// and deliver it, then lets the stopped one go on: its stale fence is
// refused, every winner is granted once, and it is healthy.
func TestE2ESIGSTOPPastTheLease(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		c := startCluster(t, clusterOpts{store: store, nodes: 3, settleEvery: 100 * time.Millisecond, compensate: 200 * time.Millisecond,
			lockTTL: 3 * time.Second, hold: "begin:STOP-"})
		const no = "STOP-1"
		deadline := c.open(c.nodes[0], e2eSpec(no, 2, 2))
		for _, p := range members[:3] {
			if st, out := c.claim(c.nodes[0], p, no, "NEED"); st != 200 {
				t.Fatalf("claim of %d: %d %v", p, st, out)
			}
		}
		sleepUntil(deadline)
		holder := waitHold(t, c.nodes, "begin", no)
		holder.signal(t, syscall.SIGSTOP)
		var other *node
		for _, n := range c.nodes {
			if n != holder {
				other = n
			}
		}
		// Within the sleeper's lease (and the lock's ttl), another instance
		// is refused: by the lock where there is one, else by the CAS.
		// other's own settle loop may have met the lock too, between the
		// holder's Acquire and its CAS (the session was still CLAIMING past
		// its deadline, so Overdue listed it): count only this request's.
		// Once the holder is past its CAS the session is SETTLING under a
		// live lease, which Overdue does not list, so no loop adds to the
		// count between the two reads.
		const contended = `lootd_lock_acquires_total{result="contended"}`
		before, _ := c.metric(other, contended)
		st, out := c.do("POST", other.internal+"/api/loot/settle", map[string]string{"sessionNo": no})
		wantError(t, "settle while the holder sleeps", st, out, 409, "already_settling")
		if store == "postgres" {
			if v, _ := c.metric(other, contended); v-before != 1 {
				t.Errorf("contended lock acquisitions on %s by the settle request: %v (%v before it, %v after), want 1", other.name, v-before, before, v)
			}
		}
		s := c.waitDelivered(other, no, 15*time.Second)
		if s["fence"] != 2.0 {
			t.Fatalf("settled under fence %v while the first settler slept, want 2", s["fence"])
		}
		if err := os.WriteFile(c.release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		holder.signal(t, syscall.SIGCONT)
		holder.waitLog(t, 10*time.Second, map[string]string{"msg": "settle refused", "session": no, "code": "taken_over"})
		if st, out := c.do("GET", holder.internal+"/healthz", nil); st != 200 {
			t.Errorf("healthz of the woken instance: %d %v", st, out)
		}
		if v, _ := c.metric(holder, `lootd_settles_total{outcome="taken_over",trigger="deadline"}`); v != 1 {
			t.Errorf("taken_over settles on the woken instance: %v, want 1", v)
		}
		c.checkExactlyOnce(holder, no, 2)
		if s := c.session(holder, no); s["fence"] != 2.0 || s["status"] != "CLOSED" {
			t.Errorf("after the stale settler woke: %v", s)
		}
	})
}

// TestE2ESIGTERMDrainsAnInFlightSettle sends SIGTERM to an instance whose
// settle request is mid-way (held after the CAS): the request completes
// with the result, new connections are refused, and the process exits 0.
func TestE2ESIGTERMDrainsAnInFlightSettle(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		c := startCluster(t, clusterOpts{store: store, nodes: 1, settleEvery: time.Hour, compensate: time.Hour, lockTTL: 10 * time.Second, hold: "begin:TERM-"})
		n := c.nodes[0]
		const no = "TERM-1"
		deadline := c.open(n, e2eSpec(no, 1, 2))
		if st, out := c.claim(n, 1002, no, "NEED"); st != 200 {
			t.Fatalf("claim: %d %v", st, out)
		}
		sleepUntil(deadline)
		type answer struct {
			st  int
			out map[string]any
		}
		done := make(chan answer, 1)
		go func() {
			st, out := c.do("POST", n.internal+"/api/loot/settle", map[string]string{"sessionNo": no})
			done <- answer{st, out}
		}()
		waitHold(t, c.nodes, "begin", no)
		n.signal(t, syscall.SIGTERM)
		n.waitLog(t, 5*time.Second, map[string]string{"msg": "shutting down"})
		// A new connection (not one the client keeps idle, which the
		// server may still be closing): the listener closed before the log.
		fresh := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		if _, err := fresh.Get(n.internal + "/healthz"); err == nil {
			t.Errorf("a new connection was served after SIGTERM")
		}
		if err := os.WriteFile(c.release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		a := <-done
		if a.st != 200 || a.out["outcome"] != "settled" {
			t.Errorf("the in-flight settle answered %d %v, want 200 settled", a.st, a.out)
		}
		select {
		case <-n.exited:
		case <-time.After(10 * time.Second):
			t.Fatal("no exit within 10s of the drain")
		}
		if n.waitErr != nil {
			t.Errorf("exit: %v, want 0", n.waitErr)
		}
		if n := c.count("SELECT COUNT(*) FROM loot_inventory WHERE grant_no = ?", no+":1002:SWORD_001"); n != 1 {
			t.Errorf("the winner's item was delivered %d times, want once", n)
		}
	})
}

// waitHold waits for the node among nodes that logs a hold at point in
// session no, and returns it.
func waitHold(t *testing.T, nodes []*node, point, no string) *node {
	t.Helper()
	end := time.Now().Add(15 * time.Second)
	for time.Now().Before(end) {
		for _, n := range nodes {
			if rec, _, _ := n.logs.find(0, map[string]string{"msg": "test hold", "point": point, "session": no}); rec != nil {
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no instance held %s at %s within 15s", no, point)
	return nil
}

// TestE2EDevAloneAuthenticatesWithTokens runs `lootd -dev` with no other
// flag: it makes a token key for the run and logs how to mint a token;
// a token from `lootd token` claims, the header alone does not, and the
// key goes with the process.
func TestE2EDevAloneAuthenticatesWithTokens(t *testing.T) {
	n := startNode(t, "dev", []string{"-dev"}, nil)
	mint, _ := n.waitLog(t, 5*time.Second, map[string]string{"msg": devKeyMsg})["mint"].(string)
	_, rest, _ := strings.Cut(mint, "-token-key-file ")
	keyFile, _, _ := strings.Cut(rest, " ")
	tok, err := exec.Command(lootdBinary(t), "token", "-token-key-file", keyFile, "-player", "1001").Output()
	if err != nil {
		t.Fatalf("lootd token (from %q): %v", mint, err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	if st, _, out := send(t, c, "POST", n.internal+"/api/loot/sessions", spec("DEV-1", 1, 1001, 1002)); st != 201 {
		t.Fatalf("open: %d %v", st, out)
	}
	if st, _, out := send(t, c, "POST", n.internal+"/api/loot/sessions/DEV-1/start", nil); st != 200 {
		t.Fatalf("start: %d %v", st, out)
	}
	body := `{"sessionNo":"DEV-1","intentType":"NEED"}`
	st, _, out := send(t, c, "POST", n.player+"/api/loot/intent", body, "X-Player-Id", "1001")
	wantError(t, "the header, untrusted", st, out, 401, "unauthenticated")
	st, _, out = send(t, c, "POST", n.player+"/api/loot/intent", body, "Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	if st != 200 || out["playerId"] != 1001.0 {
		t.Fatalf("claim with the minted token: %d %v", st, out)
	}
	if err := n.stop(t); err != nil {
		t.Errorf("exit after SIGTERM: %v, want 0", err)
	}
	if _, err := os.Stat(keyFile); !os.IsNotExist(err) {
		t.Errorf("the run's key %s outlived it: %v", keyFile, err)
	}
}
