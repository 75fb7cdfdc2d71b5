package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/props/loot/service/instance"
	"github.com/onceproof/onceproof/props/loot/service/lootdproc"
)

// The end-to-end harness: lootd built with -tags lootdtest (its hold
// points, hooks_lootdtest.go) and run as real processes on one throwaway
// database, talked to over HTTP, killed and stopped with real signals:
// started the one way every test starts lootd (lootdproc, instance).

func TestMain(m *testing.M) {
	code := m.Run()
	lootdproc.RemoveBinaries()
	testserver.StopAll()
	os.Exit(code)
}

// lootdBinary is the test build of lootd (lootdproc builds it once).
func lootdBinary(t testing.TB) string { return lootdproc.BinaryTags(t, "lootdtest") }

// node is one running lootd: a fleet of one (package instance), its
// stderr kept in logs as well as in its file.
type node struct {
	name             string
	player, internal string // base URLs
	fleet            *instance.Fleet
	logs             *logLines
	exited           chan struct{} // closed once it has exited and waitErr is set
	waitErr          error         // its exit status (nil: exit 0)
}

// logLines keeps a process's log lines and wakes whoever waits for one.
type logLines struct {
	mu      sync.Mutex
	lines   []string
	partial []byte
	changed chan struct{}
}

func newLogLines() *logLines { return &logLines{changed: make(chan struct{})} }

// Write takes a process's output: each complete line is kept (a partial
// one waits for its end).
func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			break
		}
		l.lines = append(l.lines, string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

// find returns the first JSON line at or after index from whose fields
// match (each key's value, printed with %v, equal), its index, and a
// channel closed when a new line arrives.
func (l *logLines) find(from int, match map[string]string) (map[string]any, int, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := from; i < len(l.lines); i++ {
		var rec map[string]any
		if json.Unmarshal([]byte(l.lines[i]), &rec) != nil {
			continue
		}
		ok := true
		for k, v := range match {
			ok = ok && fmt.Sprint(rec[k]) == v
		}
		if ok {
			return rec, i, nil
		}
	}
	return nil, len(l.lines), l.changed
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// waitLog waits up to timeout for a log line of n whose fields match.
func (n *node) waitLog(t testing.TB, timeout time.Duration, match map[string]string) map[string]any {
	t.Helper()
	deadline := time.After(timeout)
	from := 0
	for {
		rec, next, changed := n.logs.find(from, match)
		if rec != nil {
			return rec
		}
		from = next
		select {
		case <-changed:
		case <-n.exited:
			if rec, _, _ := n.logs.find(from, match); rec != nil {
				return rec
			}
			t.Fatalf("%s exited (%v) before logging %v", n.name, n.waitErr, match)
		case <-deadline:
			t.Fatalf("%s logged no %v within %v", n.name, match, timeout)
		}
	}
}

// startNode runs lootd with args and env on ports of its own, waits
// until it serves and has logged its "listening" line, and ends it when t
// ends (SIGTERM, then SIGKILL after 10 s); its log is printed if t failed.
func startNode(t testing.TB, name string, args, env []string) *node {
	t.Helper()
	n := &node{name: name, logs: newLogLines(), exited: make(chan struct{})}
	o := lootdproc.Fleet(lootdproc.Listen(lootdBinary(t), args...), 1, t.TempDir())
	o.Env, o.Stderr = env, func(int) io.Writer { return n.logs }
	o.ReadyTimeout = 30 * time.Second
	f, err := instance.Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	n.fleet = f
	go func() {
		<-f.Exited(0)
		n.waitErr = f.ExitStatus(0)
		close(n.exited)
	}()
	t.Cleanup(func() {
		n.stop(t)
		f.Close()
		if t.Failed() {
			t.Logf("log of %s:\n%s", n.name, n.logs)
		}
	})
	n.waitLog(t, 30*time.Second, map[string]string{"msg": "listening"})
	n.player, n.internal = f.URL(0, "port"), f.URL(0, "internal")
	return n
}

// signal sends sig to n's process.
func (n *node) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(n.fleet.Pid(0), sig); err != nil {
		t.Fatalf("%s: signal %v: %v", n.name, sig, err)
	}
}

// stop ends n as a deployment would (instance's Term: SIGCONT, since it
// may be stopped, SIGTERM, SIGKILL after 10 s) and returns its exit
// status (nil: exit 0).
func (n *node) stop(t testing.TB) error {
	err := n.fleet.Term(0, 10*time.Second)
	if errors.Is(err, instance.ErrKilled) {
		t.Errorf("%s: %v", n.name, err)
	}
	<-n.exited
	return err
}

// kill9 kills n with SIGKILL and waits for it to be gone.
func (n *node) kill9(t testing.TB) {
	t.Helper()
	if err := n.fleet.Kill(0); err != nil {
		t.Fatalf("%s: %v", n.name, err)
	}
	<-n.exited
}

// cluster is lootd nodes on one database.
type cluster struct {
	t       testing.TB
	store   string  // "mariadb" (no lock: the CAS alone) or "postgres" (with the Redis lock)
	dsn     string  // the database, as -db takes it
	db      *sql.DB // the test's own connection, for the source document's SQL checks
	nodes   []*node
	release string // the hold points' release file
	client  *http.Client
}

// e2eStores are the stores every e2e test runs on: MariaDB with no lock,
// so the CAS alone decides, and PostgreSQL with the Redis lock.
var e2eStores = []string{"mariadb", "postgres"}

type clusterOpts struct {
	store                   string
	nodes                   int
	settleEvery, compensate time.Duration
	lockTTL                 time.Duration
	hold                    string   // LOOTD_TEST_HOLD
	args                    []string // more flags for every node
}

// startCluster starts o.nodes nodes on a new database of o.store, every
// one trusting X-Player-Id. On MariaDB the first is given the database as
// a mysql:// URL, the others as the driver's DSN: both forms reach one
// database.
func startCluster(t testing.TB, o clusterOpts) *cluster {
	t.Helper()
	c := &cluster{t: t, store: o.store, release: filepath.Join(t.TempDir(), "release"),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	var (
		err     error
		targets []string
		common  = []string{"-player-header", "X-Player-Id", "-settle-every", o.settleEvery.String(),
			"-compensate-every", o.compensate.String(), "-lock-ttl", o.lockTTL.String()}
	)
	common = append(common, o.args...)
	switch o.store {
	case "mariadb":
		c.dsn = testserver.MariaDB(t)
		c.db, err = sql.Open("mysql", c.dsn+"?parseTime=true")
		targets = []string{"mysql://" + strings.Replace(strings.Replace(c.dsn, "@tcp(", "@", 1), ")/", "/", 1), c.dsn}
	case "postgres":
		c.dsn = testserver.Postgres(t)
		c.db, err = sql.Open("pgx", c.dsn)
		targets = []string{c.dsn}
		common = append(common, "-redis", testserver.Redis(t).URL()+"/0", "-redis-prefix", testserver.RedisPrefix(t))
	default:
		t.Fatalf("unknown store %q", o.store)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.db.Close() })
	env := []string{"LOOTD_TEST_RELEASE=" + c.release}
	if o.hold != "" {
		env = append(env, "LOOTD_TEST_HOLD="+o.hold)
	}
	for i := range o.nodes {
		args := append([]string{"-db", targets[min(i, len(targets)-1)]}, common...)
		c.nodes = append(c.nodes, startNode(t, "node"+strconv.Itoa(i), args, env))
	}
	return c
}

// forEachStore runs f as a subtest per store of e2eStores, in parallel:
// each has its own database (and Redis prefix), and they mostly wait for
// deadlines and leases.
func forEachStore(t *testing.T, f func(t *testing.T, store string)) {
	for _, st := range e2eStores {
		t.Run("store="+st, func(t *testing.T) {
			t.Parallel()
			f(t, st)
		})
	}
}

// sql adapts a query written for MySQL to c's store: PostgreSQL's $n
// placeholders, and its names where the two schemas differ.
func (c *cluster) sql(q string) string {
	if c.store != "postgres" {
		return q
	}
	q = strings.NewReplacer("loot_intent", "loot_claim", "allocated_quantity", "allocated").Replace(q)
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// do sends a request to base+path and decodes the answer.
func (c *cluster) do(method, url string, body any, header ...string) (int, map[string]any) {
	c.t.Helper()
	st, _, out := send(c.t, c.client, method, url, body, header...)
	return st, out
}

// open opens and starts a session on the first live node; it returns the
// deadline.
func (c *cluster) open(n *node, s openRequest) time.Time {
	c.t.Helper()
	st, out := c.do("POST", n.internal+"/api/loot/sessions", s)
	if st != 201 {
		c.t.Fatalf("open %s: %d %v", s.SessionNo, st, out)
	}
	if st, out := c.do("POST", n.internal+"/api/loot/sessions/"+s.SessionNo+"/start", nil); st != 200 {
		c.t.Fatalf("start %s: %d %v", s.SessionNo, st, out)
	}
	d, err := time.Parse(time.RFC3339Nano, out["deadline"].(string))
	if err != nil {
		c.t.Fatal(err)
	}
	return d
}

func (c *cluster) claim(n *node, player int64, no, intent string) (int, map[string]any) {
	c.t.Helper()
	return c.do("POST", n.player+"/api/loot/intent", map[string]string{"sessionNo": no, "intentType": intent},
		"X-Player-Id", strconv.FormatInt(player, 10))
}

func (c *cluster) session(n *node, no string) map[string]any {
	c.t.Helper()
	st, out := c.do("GET", n.internal+"/api/loot/sessions/"+no, nil)
	if st != 200 {
		c.t.Fatalf("GET session %s from %s: %d %v", no, n.name, st, out)
	}
	return out
}

// waitDelivered waits up to timeout until session no is CLOSED with every
// grant SUCCESS, as n reads it, and returns it.
func (c *cluster) waitDelivered(n *node, no string, timeout time.Duration) map[string]any {
	c.t.Helper()
	end := time.Now().Add(timeout)
	for {
		s := c.session(n, no)
		done := s["status"] == "CLOSED"
		for _, g := range grantsOf(s) {
			done = done && g["status"] == "SUCCESS"
		}
		if done {
			return s
		}
		if time.Now().After(end) {
			c.t.Fatalf("session %s not delivered within %v: %v", no, timeout, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func grantsOf(s map[string]any) []map[string]any {
	gs, _ := s["grants"].([]any)
	out := make([]map[string]any, len(gs))
	for i, g := range gs {
		out[i] = g.(map[string]any)
	}
	return out
}

// metric scrapes n's /metrics and returns the value of the series written
// exactly as series (name{labels} as the text format prints it).
func (c *cluster) metric(n *node, series string) (float64, bool) {
	c.t.Helper()
	resp, err := c.client.Get(n.internal + "/metrics")
	if err != nil {
		c.t.Fatalf("scrape %s: %v", n.name, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				c.t.Fatalf("%s: %q", series, sc.Text())
			}
			return f, true
		}
	}
	return 0, false
}

// count runs the source document's kind of check: one COUNT(*).
func (c *cluster) count(query string, args ...any) int {
	c.t.Helper()
	var n int
	if err := c.db.QueryRowContext(c.t.Context(), c.sql(query), args...).Scan(&n); err != nil {
		c.t.Fatalf("%s: %v", query, err)
	}
	return n
}

// checkExactlyOnce checks, in the database, that session no has want
// grants, each delivered into the inventory exactly once, and that its
// audit replays.
func (c *cluster) checkExactlyOnce(n *node, no string, want int) {
	c.t.Helper()
	if got := c.count("SELECT COUNT(*) FROM loot_grant WHERE session_no = ?", no); got != want {
		c.t.Errorf("session %s: %d grants, want %d", no, got, want)
	}
	if got := c.count(`SELECT COUNT(*) FROM loot_inventory i JOIN loot_grant g ON g.grant_no = i.grant_no
		WHERE g.session_no = ?`, no); got != want {
		c.t.Errorf("session %s: %d inventory rows, want %d (one per grant)", no, got, want)
	}
	st, out := c.do("GET", n.internal+"/api/loot/sessions/"+no+"/audit", nil)
	if st != 200 || out["replays"] != true {
		c.t.Errorf("audit of %s: %d %v", no, st, out)
	}
}

// sleepUntil sleeps until t (the database runs on this machine: its
// clock is this one) plus a margin for the store's own reading of it.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t) + 100*time.Millisecond) }
