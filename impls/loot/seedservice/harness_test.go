package seedservice

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// The harness: the service compiled by build.sh with javac, run as a real
// JVM on a throwaway MariaDB (the document's schema.sql applied) and the
// shared throwaway Redis, talked to over HTTP, delivering to an inventory
// the test hosts.

// driverJar is Debian's libmariadb-java, the service's only dependency.
const driverJar = "/usr/share/java/mariadb-java-client.jar"

// zone is the service's loot.time-zone, the document's: every DATETIME it
// writes and every NOW() it compares is this zone's wall clock.
const zone = "Asia/Shanghai"

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	testserver.StopAll()
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// classes builds the service once per test binary and returns its class
// directory. Without javac, java or the driver jar the test skips, or
// fails under ONCEPROOF_REQUIRE_SERVICES=1.
func classes(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"javac", "java"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(t, tool+" not on PATH")
		}
	}
	if _, err := os.Stat(driverJar); err != nil {
		missing(t, driverJar+" missing")
	}
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "seedservice-"); buildErr != nil {
			return
		}
		out, err := exec.Command("sh", "build.sh", buildDir).CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("sh build.sh %s: %v\n%s", buildDir, err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildDir
}

func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv(testserver.RequireEnv) == "1" {
		t.Fatalf("%s and %s=1", what, testserver.RequireEnv)
	}
	t.Skipf("%s; install with: apt-get install openjdk-17-jdk-headless libmariadb-java", what)
}

// env is what instances of the service share: a database with the
// document's schema.sql applied, a Redis key prefix for the settle lock,
// and the inventory they deliver to.
type env struct {
	t      *testing.T
	db     *sql.DB // the test's own connection, reading times in zone
	jdbc   string  // the document's JDBC URL, host, port and database replaced
	redis  *testserver.RedisServer
	lockNS string // loot.settle.lock-key-prefix
	inv    *inventory
}

// instance is one running JVM of the service.
type instance struct {
	t      *testing.T
	base   string // http://127.0.0.1:PORT
	cmd    *exec.Cmd
	exited chan struct{}
	out    *lines
	client *http.Client
}

// service is an env and its first instance.
type service struct {
	*env
	*instance
}

// startService makes an env and starts one instance on it.
func startService(t *testing.T, extra ...string) service {
	t.Helper()
	e := newEnv(t)
	return service{e, e.start(extra...)}
}

func newEnv(t *testing.T) *env {
	t.Helper()
	classes(t)
	dsn := testserver.MariaDB(t)
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", dsn+"?parseTime=true&loc="+url.QueryEscape(zone))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, stmt := range schemaStatements(t) {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("schema.sql: %v\n%s", err, stmt)
		}
	}
	return &env{t: t, db: db, redis: testserver.Redis(t), lockNS: testserver.RedisPrefix(t) + "loot:settle:lock:", inv: newInventory(t),
		jdbc: fmt.Sprintf("jdbc:mysql://%s/%s?useUnicode=true&characterEncoding=utf8&serverTimezone=%s", cfg.Addr, cfg.DBName, zone)}
}

// start starts an instance on e, with the compensation timer off (tests
// run passes through POST /api/loot/compensate) and extra --key=value
// arguments, and stops it when the test ends.
func (e *env) start(extra ...string) *instance {
	e.t.Helper()
	return e.startEnv(nil, extra...)
}

// startEnv is start with environ added to the JVM's environment.
func (e *env) startEnv(environ []string, extra ...string) *instance {
	t := e.t
	t.Helper()
	host, port, _ := net.SplitHostPort(e.redis.Addr)
	args := append([]string{"-cp", classes(t) + ":" + driverJar, "com.example.loot.LootApplication",
		"--server.address=127.0.0.1", "--server.port=0",
		"--spring.datasource.url=" + e.jdbc, "--spring.datasource.username=root", "--spring.datasource.password=",
		"--spring.data.redis.host=" + host, "--spring.data.redis.port=" + port,
		"--loot.settle.lock-key-prefix=" + e.lockNS, "--loot.time-zone=" + zone,
		"--loot.inventory.url=" + e.inv.srv.URL, "--loot.compensate.interval-millis=0"}, extra...)
	in := &instance{t: t, cmd: exec.Command("java", args...), exited: make(chan struct{}),
		out: &lines{changed: make(chan struct{})}, client: &http.Client{Timeout: 60 * time.Second}}
	in.cmd.Stdout, in.cmd.Stderr = in.out, in.out
	in.cmd.Env = append(os.Environ(), environ...)
	done, err := testserver.StartChild(in.cmd)
	if err != nil {
		t.Fatal(err)
	}
	var waitErr error
	go func() { waitErr = <-done; close(in.exited) }()
	t.Cleanup(func() {
		_ = in.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-in.exited:
		case <-time.After(10 * time.Second):
			_ = in.cmd.Process.Kill()
			<-in.exited
		}
		if t.Failed() {
			t.Logf("output of the service:\n%s", in.out)
		}
	})
	// A JVM's start on two loaded cores takes seconds; 60s is a bound on
	// waiting, not a measurement.
	started := regexp.MustCompile(`LootApplication started on (127\.0\.0\.1:\d+)`)
	m := in.out.wait(60*time.Second, started, in.exited)
	if m == nil {
		t.Fatalf("the service did not log %q within 60s (exit: %v)", started, waitErr)
	}
	in.base = "http://" + m[1]
	return in
}

// kill9 kills the instance with SIGKILL and waits until it is gone.
func (in *instance) kill9() {
	in.t.Helper()
	if err := in.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		in.t.Fatal(err)
	}
	<-in.exited
}

// schemaStatements is src/main/resources/schema.sql, one statement per
// element, its comment lines dropped.
func schemaStatements(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("src", "main", "resources", "schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "--") {
			keep = append(keep, l)
		}
	}
	var stmts []string
	for _, s := range strings.Split(strings.Join(keep, "\n"), ";") {
		if s = strings.TrimSpace(s); s != "" {
			stmts = append(stmts, s)
		}
	}
	return stmts
}

// post sends body as JSON to path and returns the status and the decoded
// answer.
func (s *instance) post(path string, body any) (int, map[string]any) {
	s.t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		s.t.Fatal(err)
	}
	return s.send("POST", path, "application/json", b)
}

func (s *instance) send(method, path, contentType string, body []byte) (int, map[string]any) {
	s.t.Helper()
	req, err := http.NewRequest(method, s.base+path, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		s.t.Fatalf("%s %s: answer %d is not a JSON object: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// lockHeld reports whether session no's settle lock is in Redis.
func (s *env) lockHeld(no string) bool {
	s.t.Helper()
	c, err := net.DialTimeout("tcp", s.redis.Addr, 5*time.Second)
	if err != nil {
		s.t.Fatal(err)
	}
	defer c.Close()
	key := s.lockNS + no
	fmt.Fprintf(c, "*2\r\n$6\r\nEXISTS\r\n$%d\r\n%s\r\n", len(key), key)
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		s.t.Fatal(err)
	}
	return line == ":1\r\n"
}

// endClaimWindow stands in for waiting out session no's claim window: the
// sessions are opened with an hour's window and this moves the deadline
// an hour back, to the open's own instant, relative to the stored value
// so that the service's zone is kept. Every statement and check of the
// service then finds the deadline passed, as an hour later it would.
func (s *env) endClaimWindow(no string) {
	s.t.Helper()
	res, err := s.db.Exec("UPDATE loot_session SET deadline_at = deadline_at - INTERVAL 3600 SECOND WHERE session_no = ?", no)
	if err != nil {
		s.t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		s.t.Fatalf("endClaimWindow(%s): %d rows", no, n)
	}
}

// lines collects a process's output and wakes whoever waits for a line.
type lines struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.changed)
	l.changed = make(chan struct{})
	return len(p), nil
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// wait returns re's first match in the output, or nil when timeout passes
// or exited closes first.
func (l *lines) wait(timeout time.Duration, re *regexp.Regexp, exited <-chan struct{}) []string {
	deadline := time.After(timeout)
	for {
		l.mu.Lock()
		m := re.FindStringSubmatch(l.buf.String())
		ch := l.changed
		l.mu.Unlock()
		if m != nil {
			return m
		}
		select {
		case <-ch:
		case <-exited:
			return re.FindStringSubmatch(l.String())
		case <-deadline:
			return nil
		}
	}
}

// inventory is the HTTP inventory the service delivers to: it records
// every delivery (its Idempotency-Key and body) and answers 200, except
// that it refuses the first fail deliveries with 503, recording only
// their keys (refused).
type inventory struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []delivery
	fail    int
	refused []string
}

type delivery struct {
	Key                          string
	GrantNo, SessionNo, LootCode string
	PlayerID                     int64
	Quantity                     int
}

func newInventory(t *testing.T) *inventory {
	inv := &inventory{}
	inv.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d delivery
		if r.Method != "POST" || json.NewDecoder(r.Body).Decode(&d) != nil {
			http.Error(w, "bad delivery", http.StatusBadRequest)
			return
		}
		d.Key = r.Header.Get("Idempotency-Key")
		inv.mu.Lock()
		if inv.fail > 0 {
			inv.fail--
			inv.refused = append(inv.refused, d.Key)
			inv.mu.Unlock()
			http.Error(w, "inventory unavailable", http.StatusServiceUnavailable)
			return
		}
		inv.got = append(inv.got, d)
		inv.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"applied":true}`)
	}))
	t.Cleanup(inv.srv.Close)
	return inv
}

// failNext makes the next n deliveries fail.
func (inv *inventory) failNext(n int) {
	inv.mu.Lock()
	inv.fail = n
	inv.mu.Unlock()
}

func (inv *inventory) refusedKeys() []string {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return append([]string(nil), inv.refused...)
}

func (inv *inventory) deliveries() []delivery {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return append([]delivery(nil), inv.got...)
}

// jsonBody is v as a JSON request body.
func jsonBody(v any) io.Reader {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return bytes.NewReader(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
