package postgres_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/postgres"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// The process kit: a test re-runs its own binary as a child (TestMain
// diverts it to runChild) that is one service instance: its own pool, its
// own Redis client, its own Service, on the database and Redis the parent
// names. The child prints one line per step it passed ("at after-cas S-1")
// so the parent can SIGKILL it there, SIGSTOP it, or watch it; a stop
// point makes it wait there first, for the signal.

// envChild carries a child's configuration (JSON of childConfig).
const envChild = "LOOT_PG_CHILD"

type childConfig struct {
	Role     string        // "settle", "recover", "node", "skew-settle" or "skew-claim"
	PG       string        // database URL
	Redis    string        // Redis URL
	Prefix   string        // lock key prefix
	Clock    bool          // open the store with the test clock
	Batch    bool          // open the store and the lock with Options.Batch
	Inv      string        // the delivery path: "" one grant at a time, invBatch or invLedger (see childInventory)
	Sessions []string      // what to settle (settle, node) or wait for (recover, node)
	Workers  int           // settle: goroutines taking Sessions in order
	Stop     string        // the point to stop at ("after-cas", ...), "" none
	StopAt   string        // ... of this session only ("" any)
	Pause    bool          // at Stop: go on after SIGCONT (the parent SIGSTOPs it there), not never (for SIGKILL)
	Lease    time.Duration // loot.Config.SettleLease (and the lock ttl)
	Backoff  loot.Backoff
	Rounds   int           // recover: Recover calls (0: until Sessions are done or For passes)
	For      time.Duration // recover, node: give up after this long
	Flaky    float64       // node: probability that a Deliver fails (half before, half after applying)
	Seed     uint64
	Skew     time.Duration // the node's clock: time.Now() + Skew (skew_test.go)
	App      string        // the application_name of its connections (set by startChild)
}

func (c childConfig) withDefaults() childConfig {
	if c.Workers == 0 {
		c.Workers = 1
	}
	if c.Lease == 0 {
		c.Lease = 300 * time.Millisecond
	}
	if c.Backoff == (loot.Backoff{}) {
		c.Backoff = loot.Backoff{Base: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	}
	if c.For == 0 {
		c.For = 20 * time.Second
	}
	return c
}

// childMain runs the child and exits when this process is one; otherwise it
// returns at once. TestMain calls it first.
func childMain() {
	env := os.Getenv(envChild)
	if env == "" {
		return
	}
	var cfg childConfig
	if err := json.Unmarshal([]byte(env), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "child: config: %v\n", err)
		os.Exit(2)
	}
	if err := runChild(cfg.withDefaults()); err != nil {
		fmt.Fprintf(os.Stderr, "child: %v\n", err)
		os.Exit(2)
	}
	os.Exit(0)
}

// say writes one line with one write: a line written before SIGKILL stays
// readable in the pipe.
var sayMu sync.Mutex

func say(format string, args ...any) {
	sayMu.Lock()
	defer sayMu.Unlock()
	os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
}

// at reports a step and stops there if it is cfg's stop point.
func (c childConfig) at(point, session string) {
	say("at %s %s", point, session)
	if point != c.Stop || (c.StopAt != "" && session != c.StopAt) {
		return
	}
	if c.Pause {
		// Wait here for the parent's SIGSTOP and SIGCONT: the process is
		// frozen for as long as the parent keeps it stopped, and goes on
		// from this very step when continued.
		cont := make(chan os.Signal, 1)
		signal.Notify(cont, syscall.SIGCONT)
		say("stopped %s %s", point, session)
		select {
		case <-cont:
		case <-time.After(childBound):
		}
		signal.Stop(cont)
		say("resumed %s %s", point, session)
		return
	}
	say("stopped %s %s", point, session)
	// Sleep, not select{}: with every goroutine blocked the runtime would
	// exit with "deadlock" before the parent's SIGKILL lands.
	time.Sleep(time.Hour)
}

func runChild(cfg childConfig) error {
	ctx := context.Background()
	opts := postgres.Options{Batch: cfg.Batch, Config: func(c *pgxpool.Config) {
		c.ConnConfig.RuntimeParams["application_name"] = cfg.App
	}}
	if cfg.Clock {
		opts.TestClock = testClock
	}
	st, err := postgres.Open(ctx, cfg.PG, opts)
	if err != nil {
		return err
	}
	defer st.Close()
	lock, err := redis.Open(ctx, cfg.Redis, redis.Options{Prefix: cfg.Prefix, Batch: cfg.Batch})
	if err != nil {
		return err
	}
	defer lock.Close()
	inv, store, err := childInventory(st, cfg)
	if err != nil {
		return err
	}
	if cfg.Flaky > 0 {
		inv = &flakyInventory{Inventory: inv, p: cfg.Flaky, rng: rand.New(rand.NewPCG(cfg.Seed, 0xf1a))}
	}
	svc, err := loot.New(loot.Config{
		Store: store, Inventory: inv, Fairness: hookFairness{memory.NewHistory(), cfg},
		Lock: hookLock{lock, cfg}, SettleLease: cfg.Lease, Backoff: cfg.Backoff,
	})
	if err != nil {
		return err
	}
	say("started")
	switch cfg.Role {
	case "settle":
		settleAll(ctx, svc, cfg)
	case "recover":
		recoverUntil(ctx, svc, st, cfg)
	case "node":
		if err := runNode(ctx, svc, st, cfg); err != nil {
			return err
		}
	case "skew-settle":
		if err := skewSettle(ctx, svc, st, cfg); err != nil {
			return err
		}
	case "skew-claim":
		if err := skewClaim(ctx, svc, st, cfg); err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown role %q", cfg.Role)
	}
	say("done")
	return nil
}

// settleAll settles cfg.Sessions on cfg.Workers goroutines and prints each
// outcome ("settled S-1 <nil>").
func settleAll(ctx context.Context, svc *loot.Service, cfg childConfig) {
	work := make(chan string)
	go func() {
		for _, no := range cfg.Sessions {
			work <- no
		}
		close(work)
	}()
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for no := range work {
				_, err := svc.Settle(ctx, no)
				say("settled %s %v", no, errName(err))
			}
		}()
	}
	wg.Wait()
}

// recoverUntil runs Recover cfg.Rounds times, or until every session of
// cfg.Sessions is CLOSED with every grant SUCCESS (or cfg.For passed).
func recoverUntil(ctx context.Context, svc *loot.Service, st *postgres.Store, cfg childConfig) {
	deadline := time.Now().Add(cfg.For)
	for round := 1; ; round++ {
		r, err := svc.Recover(ctx)
		say("recovered settled=%d delivered=%d err=%v", r.Settled, r.Delivered, errName(err))
		if cfg.Rounds > 0 && round >= cfg.Rounds {
			return
		}
		if cfg.Rounds == 0 && (allDone(ctx, st, cfg.Sessions) || time.Now().After(deadline)) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runNode is one of several service instances on one database: it settles
// its sessions as they come due and runs Recover, until all of them are
// done.
func runNode(ctx context.Context, svc *loot.Service, st *postgres.Store, cfg childConfig) error {
	deadline := time.Now().Add(cfg.For)
	for !allDone(ctx, st, cfg.Sessions) {
		if time.Now().After(deadline) {
			return fmt.Errorf("sessions not done after %v", cfg.For)
		}
		for _, no := range cfg.Sessions {
			if _, err := svc.Settle(ctx, no); err != nil {
				say("settle %s %v", no, errName(err))
			}
		}
		if _, err := svc.Recover(ctx); err != nil {
			say("recover %v", errName(err))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// allDone reports whether every session is CLOSED with every grant SUCCESS.
func allDone(ctx context.Context, st *postgres.Store, nos []string) bool {
	for _, no := range nos {
		s, err := st.Session(ctx, no)
		if err != nil || s.Status != loot.StatusClosed {
			return false
		}
		gs, err := st.Grants(ctx, no)
		if err != nil {
			return false
		}
		for _, g := range gs {
			if g.Status != loot.GrantSuccess {
				return false
			}
		}
	}
	return true
}

// errName is the sentinel an error wraps, for the parent to match on.
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	for _, s := range []error{loot.ErrNotDue, loot.ErrAlreadySettling, loot.ErrAlreadySettled, loot.ErrCanceled,
		loot.ErrStaleFence, loot.ErrClaimsClosed, loot.ErrNotMember, loot.ErrBadArgument, loot.ErrOutcomeUnknown} {
		if errors.Is(err, s) {
			return strings.TrimPrefix(s.Error(), "loot: ")
		}
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// The hooks report each step after it returned.

type hookStore struct {
	loot.Store
	cfg childConfig
}

func (s hookStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	fz, err := s.Store.BeginSettle(ctx, no, lease)
	if err == nil {
		s.cfg.at("after-cas", no)
	}
	return fz, err
}

func (s hookStore) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	sess, err := s.Store.RecordGrants(ctx, d)
	if err == nil {
		s.cfg.at("after-record", d.Session)
	}
	return sess, err
}

func (s hookStore) MarkDelivered(ctx context.Context, no string) (loot.Grant, error) {
	g, err := s.Store.MarkDelivered(ctx, no)
	if err == nil {
		s.cfg.at(fmt.Sprintf("after-mark-%d", g.Rank), g.Session)
	}
	return g, err
}

// The child's delivery paths (childConfig.Inv). The one-grant hooks hide
// DeliverBatch and MarkDeliveredBatch (they embed the interfaces), so the
// Service delivers and marks each grant before the next; the batch hooks
// expose both, so it takes its batch path (ref/loot/delivery.go).
const (
	// invBatch: the Store's Inventory with countEffect, as a
	// BatchInventory: its DeliverBatch runs one transaction per grant,
	// each reporting "in-deliver-<rank>" from inside its Effect (before it
	// commits), then "after-deliver-batch", then "after-mark-batch".
	invBatch = "batch"
	// invLedger: the Store's Inventory without an Effect (the ledger row
	// is the item): DeliverBatch is one statement for the whole batch,
	// "after-deliver-batch", then "after-mark-batch" (a MarkDeliveredBatch
	// the Store answers from that statement's rows: delivered.go).
	invLedger = "ledger"
)

// childInventory returns the Inventory and Store the child's Service uses
// for cfg.Inv, hooked.
func childInventory(st *postgres.Store, cfg childConfig) (loot.Inventory, loot.Store, error) {
	switch cfg.Inv {
	case "":
		return hookInventory{st.Inventory(countEffect), cfg}, hookStore{st, cfg}, nil
	case invBatch:
		effect := func(ctx context.Context, tx pgx.Tx, g loot.Grant) error {
			if err := countEffect(ctx, tx, g); err != nil {
				return err
			}
			cfg.at(fmt.Sprintf("in-deliver-%d", g.Rank), g.Session)
			return nil
		}
		return hookBatchInventory{hookInventory{st.Inventory(effect), cfg}}, hookBatchStore{hookStore{st, cfg}}, nil
	case invLedger:
		return hookBatchInventory{hookInventory{st.Inventory(nil), cfg}}, hookBatchStore{hookStore{st, cfg}}, nil
	}
	return nil, nil, fmt.Errorf("unknown inventory %q", cfg.Inv)
}

// hookBatchStore is hookStore with MarkDeliveredBatch, reporting
// "after-mark-batch" once for each session the batch holds.
type hookBatchStore struct{ hookStore }

func (s hookBatchStore) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	gs, err := s.Store.(loot.BatchMarker).MarkDeliveredBatch(ctx, nos)
	if err == nil {
		for _, no := range sessionsOf(gs) {
			s.cfg.at("after-mark-batch", no)
		}
	}
	return gs, err
}

// hookBatchInventory is hookInventory with DeliverBatch, reporting
// "after-deliver-batch" once for each session the batch holds.
type hookBatchInventory struct{ hookInventory }

func (inv hookBatchInventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	err := inv.Inventory.(loot.BatchInventory).DeliverBatch(ctx, gs)
	if err == nil {
		for _, no := range sessionsOf(gs) {
			inv.cfg.at("after-deliver-batch", no)
		}
	}
	return err
}

// sessionsOf returns the sessions of gs, each once, in order.
func sessionsOf(gs []loot.Grant) []string {
	var nos []string
	for _, g := range gs {
		if !slices.Contains(nos, g.Session) {
			nos = append(nos, g.Session)
		}
	}
	return nos
}

type hookInventory struct {
	loot.Inventory
	cfg childConfig
}

func (inv hookInventory) Deliver(ctx context.Context, g loot.Grant) error {
	err := inv.Inventory.Deliver(ctx, g)
	if err == nil {
		inv.cfg.at(fmt.Sprintf("after-deliver-%d", g.Rank), g.Session)
	}
	return err
}

// hookFairness reports "before-record": the settler has its CAS and the
// fairness, and has not written its result (the session is SETTLING).
// Sessions in these tests have the loot code "L-" + their number, so the
// provider can name the session.
type hookFairness struct {
	loot.FairnessProvider
	cfg childConfig
}

func (f hookFairness) Fairness(ctx context.Context, lootCode string, ps []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	m, err := f.FairnessProvider.Fairness(ctx, lootCode, ps)
	if err == nil {
		f.cfg.at("before-record", strings.TrimPrefix(lootCode, "L-"))
	}
	return m, err
}

type hookLock struct {
	loot.Lock
	cfg childConfig
}

func (l hookLock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	ok, err := l.Lock.Acquire(ctx, key, token, ttl)
	if err == nil && ok {
		l.cfg.at("after-lock", strings.TrimPrefix(key, "loot:settle:lock:"))
	}
	return ok, err
}

// flakyInventory fails a share of deliveries: half before the inventory
// applies anything, half after (the answer lost), as a remote inventory
// service times out.
type flakyInventory struct {
	loot.Inventory
	p   float64
	mu  sync.Mutex
	rng *rand.Rand
}

var errFlaky = errors.New("inventory timeout")

func (f *flakyInventory) Deliver(ctx context.Context, g loot.Grant) error {
	f.mu.Lock()
	r, after := f.rng.Float64(), f.rng.IntN(2) == 1
	f.mu.Unlock()
	if r >= f.p {
		return f.Inventory.Deliver(ctx, g)
	}
	if after {
		if err := f.Inventory.Deliver(ctx, g); err != nil {
			return err
		}
	}
	return errFlaky
}

// childSeq numbers the children, for their application_name.
var childSeq atomic.Int64

// child is a running child process, seen from the parent.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	app    string
	lines  chan string
	mu     sync.Mutex
	seen   []string
	stderr strings.Builder
	exited chan error
}

// startChild starts a child with cfg. It is SIGKILLed when the test ends if
// still running.
func startChild(t *testing.T, cfg childConfig) *child {
	t.Helper()
	cfg.App = fmt.Sprintf("loot-child-%d", childSeq.Add(1))
	env, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A race-enabled binary sleeps a second at exit (GORACE atexit_sleep_ms)
	// to catch late reports; a child's races are reported before it prints
	// "done", so spare every child that second.
	cmd.Env = append(os.Environ(), envChild+"="+string(env), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	c := &child{t: t, cmd: cmd, app: cfg.App, lines: make(chan string, 1024), exited: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{mu: &c.mu, w: &c.stderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.mu.Lock()
			c.seen = append(c.seen, sc.Text())
			c.mu.Unlock()
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGCONT)
		_ = cmd.Process.Kill()
	})
	return c
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// childBound bounds any one wait for a child's line: far above what a
// healthy child needs (well under a second), for a wedged one only.
const childBound = 60 * time.Second

// waitLine returns the first line (from now on) that starts with prefix,
// failing the test if the child exits or childBound passes first.
func (c *child) waitLine(prefix string) string {
	c.t.Helper()
	timeout := time.After(childBound)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("child exited before printing %q; output:\n%s", prefix, c.output())
			}
			if strings.HasPrefix(line, prefix) {
				return line
			}
		case <-timeout:
			c.t.Fatalf("no %q from the child within %v; output:\n%s", prefix, childBound, c.output())
		}
	}
}

// finish waits for the child to exit by itself and fails on a non-zero exit.
func (c *child) finish() []string {
	c.t.Helper()
	for range c.lines {
	}
	select {
	case err := <-c.exited:
		if err != nil {
			c.t.Fatalf("child failed: %v; output:\n%s", err, c.output())
		}
	case <-time.After(childBound):
		c.t.Fatalf("child did not exit within %v; output:\n%s", childBound, c.output())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

// kill SIGKILLs the child and waits until it is gone, and so are its
// database sessions (pool: any pool on the database): a statement the child
// sent before it died still runs, and may commit, until its backend reads
// the closed socket. A check or a recovery that started before would race
// a dead process's last write (one did: a CAS the server ran after the
// parent had moved the test clock, so its lease outlived the recovery).
func (c *child) kill(pool *pgxpool.Pool) {
	c.t.Helper()
	defer func() {
		for end := time.Now().Add(childBound); ; time.Sleep(5 * time.Millisecond) {
			var n int
			if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, c.app).Scan(&n); err != nil {
				c.t.Fatal(err)
			}
			if n == 0 {
				return
			}
			if time.Now().After(end) {
				c.t.Fatalf("%d database sessions of the killed child still open after %v", n, childBound)
			}
		}
	}()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		c.t.Fatalf("SIGKILL: %v", err)
	}
	for range c.lines {
	}
	err := <-c.exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		c.t.Fatalf("child exited with %v, not by SIGKILL; output:\n%s", err, c.output())
	}
}

// signal sends sig (SIGSTOP, SIGCONT); for SIGSTOP it waits until the
// kernel reports the process stopped.
func (c *child) signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("%v: %v", sig, err)
	}
	if sig != syscall.SIGSTOP {
		return
	}
	for end := time.Now().Add(childBound); time.Now().Before(end); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
		if err != nil {
			c.t.Fatalf("reading the child's state: %v", err)
		}
		// The state is the field after the parenthesised command name.
		if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "T" {
			return
		}
	}
	c.t.Fatalf("child not stopped %v after SIGSTOP", childBound)
}

// printed returns the lines the child printed so far (all of them, once it
// was killed or finished).
func (c *child) printed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.seen...)
}

func (c *child) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return "stdout:\n" + strings.Join(c.seen, "\n") + "\nstderr:\n" + c.stderr.String()
}
