package main

import (
	"database/sql"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// TestE2EStoppedRedisSlowsSettlesByTheLockTimeoutAlone: lootd on
// PostgreSQL with -redis, the Redis server SIGSTOPped (its connections
// open, nothing answered) before several sessions fall due. Every session
// settles and delivers through the CAS within a bound far below the
// client's 5s socket timeout per lock call (10s per settle, one settle at a
// time, before the lock calls were bounded); the outage is one WARN,
// counted in lootd_lock_acquires_total{result="error"} and
// lootd_lock_degraded, and /readyz says "degraded" with a 200. After
// SIGCONT /readyz's probe finds the lock back (one INFO) and the next
// session settles under the lock.
func TestE2EStoppedRedisSlowsSettlesByTheLockTimeoutAlone(t *testing.T) {
	const (
		sessions = 6
		lease    = 10 * time.Second // lock timeout: loot.DefaultLockTimeout's 100ms floor
	)
	rds := testserver.StartRedis(t, "--appendonly", "no") // its own: it is stopped
	c := &cluster{t: t, store: "postgres", dsn: testserver.Postgres(t), release: filepath.Join(t.TempDir(), "release"),
		client: &http.Client{Timeout: 30 * time.Second}}
	var err error
	if c.db, err = sql.Open("pgx", c.dsn); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.db.Close() })
	n := startNode(t, "node0", []string{"-db", c.dsn, "-redis", rds.URL() + "/0", "-player-header", "X-Player-Id",
		"-settle-every", "100ms", "-compensate-every", "200ms", "-lock-ttl", lease.String()}, nil)
	c.nodes = []*node{n}

	var deadline time.Time
	for i := range sessions {
		no := fmt.Sprintf("RSTOP-%d", i)
		deadline = c.open(n, e2eSpec(no, 1, 2))
		if st, out := c.claim(n, members[i%len(members)], no, "NEED"); st != 200 {
			t.Fatalf("claim %s: %d %v", no, st, out)
		}
	}
	rds.Pause(t)
	sleepUntil(deadline)
	// 8s after the last deadline: 6 settles at 2 x 100ms of lock timeouts,
	// side by side, plus the settle loop's 100ms tick and two loaded
	// cores; unbounded, the first settle alone took 10s.
	begin := time.Now()
	for i := range sessions {
		c.waitDelivered(n, fmt.Sprintf("RSTOP-%d", i), time.Until(begin.Add(8*time.Second)))
	}
	t.Logf("%d sessions settled and delivered %v after the last deadline, Redis stopped", sessions, time.Since(begin))
	for i := range sessions {
		c.checkExactlyOnce(n, fmt.Sprintf("RSTOP-%d", i), 1)
	}
	if v, _ := c.metric(n, `lootd_lock_acquires_total{result="error"}`); v < sessions {
		t.Errorf(`lootd_lock_acquires_total{result="error"} = %v with Redis stopped, want at least %d (one per settle)`, v, sessions)
	}
	if v, ok := c.metric(n, "lootd_lock_degraded"); !ok || v != 1 {
		t.Errorf("lootd_lock_degraded = %v (present %v) with Redis stopped, want 1", v, ok)
	}
	if st, out := c.do("GET", n.internal+"/readyz", nil); st != 200 || out["lock"] != "degraded" || out["store"] != "postgres" {
		t.Errorf("/readyz with Redis stopped = %d %v, want 200 lock degraded store postgres", st, out)
	}
	const degraded = "lock degraded: settles go on through the store's CAS alone, each slowed by at most two lock timeouts"
	if k := countLog(n.logs, map[string]string{"msg": degraded, "level": "WARN"}); k != 1 {
		t.Errorf("%d \"lock degraded\" WARN lines for one outage, want 1", k)
	}

	rds.Resume(t)
	// /readyz probes the lock: poll it until the probe finds it (the
	// first call after SIGCONT may meet a connection the stop left behind).
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, out := c.do("GET", n.internal+"/readyz", nil); out["lock"] == "ok" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("/readyz still says the lock is degraded 10s after SIGCONT")
		}
	}
	n.waitLog(t, time.Second, map[string]string{"msg": "lock recovered", "level": "INFO"})
	if v, _ := c.metric(n, "lootd_lock_degraded"); v != 0 {
		t.Errorf("lootd_lock_degraded = %v after the lock recovered, want 0", v)
	}
	acquired, _ := c.metric(n, `lootd_lock_acquires_total{result="acquired"}`)
	deadline = c.open(n, e2eSpec("RSTOP-after", 1, 2))
	if st, out := c.claim(n, 1001, "RSTOP-after", "NEED"); st != 200 {
		t.Fatalf("claim RSTOP-after: %d %v", st, out)
	}
	sleepUntil(deadline)
	c.waitDelivered(n, "RSTOP-after", 10*time.Second)
	c.checkExactlyOnce(n, "RSTOP-after", 1)
	if v, _ := c.metric(n, `lootd_lock_acquires_total{result="acquired"}`); v != acquired+1 {
		t.Errorf(`lootd_lock_acquires_total{result="acquired"} = %v after a settle with Redis back, want %v`, v, acquired+1)
	}
	if k := countLog(n.logs, map[string]string{"msg": degraded}); k != 1 {
		t.Errorf("%d \"lock degraded\" lines in all, want the one of the outage", k)
	}
}
