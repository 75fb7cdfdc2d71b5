package storetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// The kill -9 kit: RunCrash re-runs the test binary as a child process
// (CrashChild diverts it from TestMain), which settles a deterministic list
// of requests with ref.Settler.Apply against a target's store and sink and
// prints "ack N" after each Apply that returned nil (the ack the sender
// gets). The child is killed with SIGKILL where it stops at a fault point,
// or at a seeded random moment. RunCrash then opens the same data as a new
// process would, checks what the kill left, runs Recover with a clock far
// ahead, re-sends every request that was not acked, and checks the ledger:
// every request's effect applied exactly once.
//
// Use, in the backend's test package:
//
//	var crashTargets = map[string]storetest.CrashTarget{"atomic": {...}}
//
//	func TestMain(m *testing.M) {
//		storetest.CrashChild(crashTargets) // returns unless this is a child
//		os.Exit(m.Run())
//	}
//
//	func TestCrash(t *testing.T) { storetest.RunCrash(t, crashTargets) }

// CrashTarget is one backend (and sink form) under the kill -9 kit.
type CrashTarget struct {
	// NewData creates fresh, empty durable data for one child run and
	// returns the name Open takes (a file path, a DSN of a new database).
	// It registers its own cleanup. Required.
	NewData func(t *testing.T) string
	// Open opens a store and a sink on the data named data; the child and
	// the recovering parent both call it. close releases both. Required.
	Open func(data string) (store ref.PendingStore, sink ref.Sink, close func() error, err error)
	// Ledger reads key's entry directly from the data (not through a
	// handle the child used). Required.
	Ledger func(t *testing.T, data string, key ref.Key) LedgerEntry
	// State, if set, reads key's recorded state directly (ref.StateNew when
	// there is no record); fault-point runs then check it.
	State func(t *testing.T, data string, key ref.Key) ref.State
	// SinkCommitsRecord says the sink advances the record to Delivered in
	// the transaction of the credit (so a kill after the sink leaves
	// nothing for Recover).
	SinkCommitsRecord bool
	_                 struct{}
}

// LedgerEntry is what the ledger holds for one key.
type LedgerEntry struct {
	// InLedger: the grant key is recorded.
	InLedger bool
	// Payload recorded with the grant key.
	Payload []byte
	// Effects counts how many times the key's effect (the credit) was
	// applied, counted in the sink's transaction: 0 or 1 when correct.
	Effects int
}

// Fault points, in the order Apply passes them.
const (
	CrashBeforeClaim = "before-claim" // before Store.Begin
	CrashAfterClaim  = "after-claim"  // Begin returned created; Sink not called
	CrashAfterSink   = "after-sink"   // Sink.Deliver returned; Commit not called
	CrashAfterCommit = "after-commit" // Apply returned nil; "ack" not sent
	crashNone        = "none"         // run to the end (killed at random)
)

// Child configuration, passed through the environment.
const (
	envCrashTarget  = "ONCEPROOF_CRASH_CHILD" // the target's name in the map
	envCrashData    = "ONCEPROOF_CRASH_DATA"
	envCrashPoint   = "ONCEPROOF_CRASH_POINT"
	envCrashAt      = "ONCEPROOF_CRASH_AT" // the request that stops at the point
	envCrashN       = "ONCEPROOF_CRASH_N"  // distinct requests
	envCrashWorkers = "ONCEPROOF_CRASH_WORKERS"
	// EnvCrashSeed, when set, makes the random-moment runs use only that seed.
	EnvCrashSeed = "ONCEPROOF_CRASH_SEED"
)

const (
	crashAckLine     = "ack "
	crashStopLine    = "stopped-at "
	crashStartedLine = "started"
	crashDoneLine    = "done"
	crashOp          = ref.Op(0xc4a54)
)

// crashBase is the child's virtual clock: request n is settled at
// crashBase + n ms, so its lease (ref.DefaultLease) ends 30s later.
var crashBase = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// CrashKey is the key of the kit's n-th request.
func CrashKey(n int) ref.Key { return ref.KeyOf(crashOp, uint64(n)) }

// CrashPayload is the payload of the kit's n-th request ("acct{n%5} {n+1}":
// an account and an amount, for sinks whose effect is a credit).
func CrashPayload(n int) []byte { return fmt.Appendf(nil, "acct%d %d", n%5, n+1) }

type crashConfig struct {
	target, data, point string
	at, n, workers      int
}

func (c crashConfig) env() []string {
	return []string{
		envCrashTarget + "=" + c.target, envCrashData + "=" + c.data, envCrashPoint + "=" + c.point,
		envCrashAt + "=" + strconv.Itoa(c.at), envCrashN + "=" + strconv.Itoa(c.n), envCrashWorkers + "=" + strconv.Itoa(c.workers),
	}
}

// CrashChild runs the crash child and exits when this process is one (the
// environment names a target); otherwise it returns at once. Call it first
// in TestMain, with the same map RunCrash gets.
func CrashChild(targets map[string]CrashTarget) {
	name := os.Getenv(envCrashTarget)
	if name == "" {
		return
	}
	target, ok := targets[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "crash child: no target %q\n", name)
		os.Exit(2)
	}
	if err := crashChild(target); err != nil {
		fmt.Fprintf(os.Stderr, "crash child: %v\n", err)
		os.Exit(2)
	}
	os.Exit(0)
}

func crashChild(target CrashTarget) error {
	cfg := crashConfig{data: os.Getenv(envCrashData), point: os.Getenv(envCrashPoint)}
	for name, dst := range map[string]*int{envCrashAt: &cfg.at, envCrashN: &cfg.n, envCrashWorkers: &cfg.workers} {
		v, err := strconv.Atoi(os.Getenv(name))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		*dst = v
	}
	store, sink, _, err := target.Open(cfg.data)
	if err != nil {
		return err
	}
	var outMu sync.Mutex
	say := func(line string) {
		// One write per line: a line written before SIGKILL stays readable
		// in the pipe.
		outMu.Lock()
		defer outMu.Unlock()
		os.Stdout.WriteString(line + "\n")
	}
	var stopOnce sync.Once
	stop := func(point string, key ref.Key) {
		if point != cfg.point || key != CrashKey(cfg.at) {
			return
		}
		stopOnce.Do(func() {
			say(crashStopLine + point)
			// Sleep, not select{}: with every goroutine blocked the runtime
			// would exit with "deadlock" before the parent's SIGKILL lands.
			time.Sleep(time.Hour)
		})
	}
	settler := ref.NewSettler(ref.NewWindow(time.Minute, 4),
		&crashStore{PendingStore: store, stop: stop},
		ref.WithSink(&crashSink{Sink: sink, stop: stop}))

	// Every request is sent twice in a row (the sender's retry), so with
	// several workers duplicates race each other.
	work := make(chan int)
	go func() {
		for n := 0; n < cfg.n; n++ {
			work <- n
			work <- n
		}
		close(work)
	}()
	say(crashStartedLine)
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
		errs  []error
	)
	for w := 0; w < cfg.workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				key := CrashKey(n)
				if _, err := settler.Apply(context.Background(), key, CrashPayload(n), crashBase.Add(time.Duration(n)*time.Millisecond)); err != nil {
					errMu.Lock()
					errs = append(errs, fmt.Errorf("request %d: %w", n, err))
					errMu.Unlock()
					continue
				}
				stop(CrashAfterCommit, key)
				say(crashAckLine + strconv.Itoa(n))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	say(crashDoneLine)
	return nil
}

// crashStore and crashSink stop the child at the fault points around the
// real calls.
type crashStore struct {
	ref.PendingStore
	stop func(point string, key ref.Key)
}

func (f *crashStore) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	f.stop(CrashBeforeClaim, c.Key)
	st, created, err := f.PendingStore.Begin(ctx, c)
	if err == nil && created {
		f.stop(CrashAfterClaim, c.Key)
	}
	return st, created, err
}

type crashSink struct {
	ref.Sink
	stop func(point string, key ref.Key)
}

func (f *crashSink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	err := f.Sink.Deliver(ctx, key, payload)
	if err == nil {
		f.stop(CrashAfterSink, key)
	}
	return err
}

// childRun is what the parent saw of one child.
type childRun struct {
	acked   map[int]bool
	stopped string
	started bool
	killed  bool
	done    bool
	stderr  string
}

// runCrashChild starts a child with cfg and kills it with SIGKILL when kill
// (called on every stdout line, with the acks so far) says so.
func runCrashChild(t *testing.T, cfg crashConfig, kill func(line string, acks int) bool) childRun {
	t.Helper()
	// The bound is for a wedged child only (a healthy one takes well under
	// a second); it is not a timing assertion.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), cfg.env()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("stdout pipe: %v", err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start child: %v", err)
	}
	run := childRun{acked: map[int]bool{}}
	acks := 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, crashAckLine):
			n, err := strconv.Atoi(strings.TrimPrefix(line, crashAckLine))
			if err != nil {
				t.Fatalf("child printed %q", line)
			}
			run.acked[n] = true
			acks++
		case strings.HasPrefix(line, crashStopLine):
			run.stopped = strings.TrimPrefix(line, crashStopLine)
		case line == crashStartedLine:
			run.started = true
		case line == crashDoneLine:
			run.done = true
		}
		if run.started && !run.killed && !run.done && kill(line, acks) {
			if err := killProcess(cmd.Process); err != nil {
				t.Fatalf("SIGKILL child %d: %v", cmd.Process.Pid, err)
			}
			run.killed = true
		}
	}
	err = cmd.Wait()
	run.stderr = stderr.String()
	if ctx.Err() != nil {
		t.Fatalf("child did not finish within the bound; stderr:\n%s", run.stderr)
	}
	if !run.started {
		t.Fatalf("child never started (exit %v): does TestMain call storetest.CrashChild first? stderr:\n%s", err, run.stderr)
	}
	switch {
	case run.killed:
		if !killedBySIGKILL(err) {
			// It exited by itself between the decision and the signal.
			run.killed = false
			if err != nil {
				t.Fatalf("child failed: %v; stderr:\n%s", err, run.stderr)
			}
		}
	case err != nil:
		t.Fatalf("child failed: %v; stderr:\n%s", err, run.stderr)
	}
	return run
}

// crashWant is what a fault-point run must find after the kill, before
// recovery, for the request that stopped.
type crashWant struct {
	state     ref.State // its record (StateNew: none)
	inLedger  bool
	recovered int // what Recover completes
}

func wantAt(point string, sinkCommits bool) crashWant {
	switch point {
	case CrashBeforeClaim:
		return crashWant{ref.StateNew, false, 0}
	case CrashAfterClaim:
		return crashWant{ref.StateGranted, false, 1}
	case CrashAfterSink:
		if sinkCommits {
			return crashWant{ref.StateDelivered, true, 0}
		}
		return crashWant{ref.StateGranted, true, 1}
	}
	return crashWant{ref.StateDelivered, true, 0}
}

// RunCrash runs the kill -9 tests on every target as subtests of t: one
// child killed at each fault point, and children of four workers killed at
// seeded random moments. The process must have called CrashChild(targets)
// from TestMain. Unix only (it needs SIGKILL); elsewhere it skips.
// After each kill it recovers and checks the ledger exactly-once. Passing
// is not a proof: a kill may miss the one bad instant.
func RunCrash(t *testing.T, targets map[string]CrashTarget) {
	t.Helper()
	if !canKill {
		t.Skip("storetest.RunCrash needs SIGKILL (unix)")
	}
	names := make([]string, 0, len(targets))
	for name, tg := range targets {
		if tg.NewData == nil || tg.Open == nil || tg.Ledger == nil {
			t.Fatalf("storetest.RunCrash: target %q needs NewData, Open and Ledger", name)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		tg := targets[name]
		t.Run("target="+name, func(t *testing.T) {
			for _, point := range []string{CrashBeforeClaim, CrashAfterClaim, CrashAfterSink, CrashAfterCommit} {
				t.Run("point="+point, func(t *testing.T) { crashAtPoint(t, name, tg, point) })
			}
			seeds := []uint64{1, 2}
			if s := os.Getenv(EnvCrashSeed); s != "" {
				v, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					t.Fatalf("%s=%q: %v", EnvCrashSeed, s, err)
				}
				seeds = []uint64{v}
			}
			for _, seed := range seeds {
				t.Run(fmt.Sprintf("random/seed=%d", seed), func(t *testing.T) { crashAtRandom(t, name, tg, seed) })
			}
		})
	}
}

func crashAtPoint(t *testing.T, name string, tg CrashTarget, point string) {
	const (
		n  = 8 // requests per child: a few before and after the stop
		at = 3 // the request that stops: three are acked before it
	)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: go test -race -count=1 -run '%s' <this package>", runPattern(t.Name()))
		}
	})
	cfg := crashConfig{target: name, data: tg.NewData(t), point: point, at: at, n: n, workers: 1}
	run := runCrashChild(t, cfg, func(line string, _ int) bool { return strings.HasPrefix(line, crashStopLine) })
	if !run.killed || run.stopped != point {
		t.Fatalf("child was not killed at %s (stopped at %q, done=%v); stderr:\n%s", point, run.stopped, run.done, run.stderr)
	}
	for i := 0; i < n; i++ {
		if want := i < at; run.acked[i] != want {
			t.Fatalf("request %d acked=%v, want %v (one worker settles in order)", i, run.acked[i], want)
		}
	}
	v := openCrashVerifier(t, tg, cfg.data)
	v.checkAfterKill(t, run.acked, n)
	want := wantAt(point, tg.SinkCommitsRecord)
	k := CrashKey(at)
	if e := tg.Ledger(t, cfg.data, k); e.InLedger != want.inLedger {
		t.Fatalf("after SIGKILL at %s: grant in ledger %v, want %v", point, e.InLedger, want.inLedger)
	}
	if tg.State != nil {
		if st := tg.State(t, cfg.data, k); st != want.state {
			t.Fatalf("after SIGKILL at %s: record %v, want %v", point, st, want.state)
		}
	}
	if want.state == ref.StateGranted {
		// The dead node's lease still runs: no other node may complete
		// its grant yet.
		live := crashBase.Add(time.Duration(at)*time.Millisecond + ref.DefaultLease - time.Second)
		if got, err := v.settler.Recover(t.Context(), live); err != nil || got != 0 {
			t.Fatalf("Recover before the lease ended completed %d (err %v), want 0", got, err)
		}
	}
	if got := v.recoverAndResend(t, run.acked, n); got != want.recovered {
		t.Fatalf("Recover completed %d records, want %d", got, want.recovered)
	}
	v.checkExactlyOnce(t, n)
}

// crashAtRandom kills a child of four workers (duplicates racing) after a
// seeded number of acks plus a seeded delay, so the kill lands anywhere:
// inside a database commit, between the ledger and the record, between two
// workers' transactions. The seed fixes those choices; where the kill lands
// still depends on scheduling.
func crashAtRandom(t *testing.T, name string, tg CrashTarget, seed uint64) {
	const n = 40 // distinct requests (80 sends): long enough to be killed mid-run
	rng := rand.New(rand.NewPCG(seed, uint64(crashOp)))
	killAt := rng.IntN(2 * n) // acks seen before the kill (each request is sent twice)
	delay := time.Duration(rng.IntN(2000)) * time.Microsecond
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("reproduce: %s=%d go test -race -count=1 -run '%s' <this package> (kill after %d acks + %v)",
				EnvCrashSeed, seed, runPattern(t.Name()), killAt, delay)
		}
	})
	cfg := crashConfig{target: name, data: tg.NewData(t), point: crashNone, n: n, workers: 4}
	run := runCrashChild(t, cfg, func(line string, acks int) bool {
		if acks < killAt {
			return false
		}
		time.Sleep(delay)
		return true
	})
	if run.killed {
		t.Logf("killed after %d of %d requests acked", len(run.acked), n)
	} else {
		t.Logf("child finished before the kill (%d acks): checking the clean run", len(run.acked))
	}
	v := openCrashVerifier(t, tg, cfg.data)
	v.checkAfterKill(t, run.acked, n)
	v.recoverAndResend(t, run.acked, n)
	v.checkExactlyOnce(t, n)
}

// crashVerifier is the new process that recovers after the kill.
type crashVerifier struct {
	tg      CrashTarget
	data    string
	store   ref.PendingStore
	settler *ref.Settler
}

func openCrashVerifier(t *testing.T, tg CrashTarget, data string) *crashVerifier {
	t.Helper()
	store, sink, closeFn, err := tg.Open(data)
	if err != nil {
		t.Fatalf("reopen after SIGKILL: %v", err)
	}
	t.Cleanup(func() {
		if err := closeFn(); err != nil {
			t.Logf("close: %v", err)
		}
	})
	return &crashVerifier{tg: tg, data: data, store: store, settler: ref.NewSettler(ref.NewWindow(time.Minute, 4), store, ref.WithSink(sink))}
}

// checkAfterKill: right after the kill, before any recovery, every acked
// request is in the ledger; no credit landed without its grant key or the
// other way round; no key was credited twice; a Delivered record has its
// grant.
func (v *crashVerifier) checkAfterKill(t *testing.T, acked map[int]bool, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := CrashKey(i)
		e := v.tg.Ledger(t, v.data, k)
		if acked[i] && !e.InLedger {
			t.Fatalf("request %d was acked but its grant is not in the ledger after SIGKILL", i)
		}
		switch {
		case e.Effects > 1:
			t.Fatalf("request %d after SIGKILL: effect applied %d times: credited twice", i, e.Effects)
		case e.InLedger != (e.Effects == 1):
			t.Fatalf("request %d after SIGKILL: grant in ledger %v but effect applied %d times: a credit and its grant key were not written together", i, e.InLedger, e.Effects)
		}
		if v.tg.State != nil && v.tg.State(t, v.data, k) == ref.StateDelivered && !e.InLedger {
			t.Fatalf("request %d: record Delivered but its grant is not in the ledger", i)
		}
	}
}

// recoverAndResend runs Recover far past every lease, then re-sends every
// request that was not acked (the sender's retry). It returns what Recover
// completed.
func (v *crashVerifier) recoverAndResend(t *testing.T, acked map[int]bool, n int) int {
	t.Helper()
	later := crashBase.Add(time.Hour)
	done, err := v.settler.Recover(t.Context(), later)
	if err != nil {
		t.Fatalf("Recover: %v", err)
	}
	if recs, err := v.store.Pending(t.Context(), later, 1); err != nil || len(recs) != 0 {
		t.Fatalf("after Recover Pending = %d records, %v; want none", len(recs), err)
	}
	for i := 0; i < n; i++ {
		if acked[i] {
			continue
		}
		res, err := v.settler.Apply(t.Context(), CrashKey(i), CrashPayload(i), later)
		if err != nil || res.State != ref.StateDelivered {
			t.Fatalf("re-send of request %d = %+v, %v; want Delivered", i, res, err)
		}
	}
	return done
}

// checkExactlyOnce: every request's grant is in the ledger with its own
// payload and its effect applied exactly once; every record is Delivered.
func (v *crashVerifier) checkExactlyOnce(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		k := CrashKey(i)
		e := v.tg.Ledger(t, v.data, k)
		if !e.InLedger || e.Effects != 1 || string(e.Payload) != string(CrashPayload(i)) {
			t.Fatalf("request %d after recovery: in ledger %v, effect applied %d times, payload %q; want once with %q",
				i, e.InLedger, e.Effects, e.Payload, CrashPayload(i))
		}
		if v.tg.State != nil {
			if st := v.tg.State(t, v.data, k); st != ref.StateDelivered {
				t.Fatalf("request %d: record %v after recovery, want Delivered", i, st)
			}
		}
	}
}
