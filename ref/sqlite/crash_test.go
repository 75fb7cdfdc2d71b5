//go:build unix

package sqlite

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// The kill -9 tests re-run this test binary as a child process (TestMain
// diverts it when envChild is set). The child settles a deterministic list
// of requests with ref.Settler.Apply against a SQLite Store and Sink, prints
// "ack N" after each Apply that returned nil (the ack the sender would get),
// and is killed with SIGKILL either where it stops at a fault point or at a
// random moment. The test then opens the same file as a new process would,
// runs Recover with a clock far ahead, re-sends every request that was not
// acked, and checks the ledger: every request credited exactly once.

// Child configuration, passed through the environment.
const (
	envChild   = "ONCEPROOF_SQLITE_CRASH_CHILD" // "1" makes TestMain run crashChild
	envPath    = "ONCEPROOF_SQLITE_CRASH_DB"
	envPoint   = "ONCEPROOF_SQLITE_CRASH_POINT" // a fault point, or "none"
	envAt      = "ONCEPROOF_SQLITE_CRASH_AT"    // the request index that stops at the point
	envN       = "ONCEPROOF_SQLITE_CRASH_N"     // how many distinct requests
	envWorkers = "ONCEPROOF_SQLITE_CRASH_WORKERS"
	envSink    = "ONCEPROOF_SQLITE_CRASH_SINK" // "atomic" (Store.Sink) or "separate" (OpenSink)
)

// Fault points, in the order Apply passes them.
const (
	pointBeforeClaim = "before-claim" // before Store.Begin
	pointAfterClaim  = "after-claim"  // Begin returned created, Sink not called
	pointAfterSink   = "after-sink"   // Sink.Deliver returned, Commit not called
	pointAfterCommit = "after-commit" // Apply returned nil, "ack" not printed
	pointNone        = "none"         // run to the end (killed at random)
	ackLine          = "ack "
	stopLine         = "stopped-at "
	startedLine      = "started"
	doneLine         = "done"
)

var crashSeed = flag.Uint64("crash.seed", 0, "seed of TestCrashKillAtRandomMoments (0: the fixed seeds)")

func TestMain(m *testing.M) {
	if os.Getenv(envChild) == "1" {
		os.Exit(crashChild())
	}
	os.Exit(m.Run())
}

// childConfig is what the child reads from the environment.
type childConfig struct {
	path, point, sink string
	at, n, workers    int
}

func (c childConfig) env() []string {
	return []string{
		envChild + "=1", envPath + "=" + c.path, envPoint + "=" + c.point, envSink + "=" + c.sink,
		envAt + "=" + strconv.Itoa(c.at), envN + "=" + strconv.Itoa(c.n), envWorkers + "=" + strconv.Itoa(c.workers),
	}
}

// crashChild is the child process's main. Its exit code is only seen when
// it is not killed: 0 after settling everything, 2 on an error.
func crashChild() int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "crash child: "+format+"\n", args...)
		return 2
	}
	cfg := childConfig{path: os.Getenv(envPath), point: os.Getenv(envPoint), sink: os.Getenv(envSink)}
	var err error
	for name, dst := range map[string]*int{envAt: &cfg.at, envN: &cfg.n, envWorkers: &cfg.workers} {
		if *dst, err = strconv.Atoi(os.Getenv(name)); err != nil {
			return fail("%s: %v", name, err)
		}
	}
	store, err := Open(cfg.path)
	if err != nil {
		return fail("%v", err)
	}
	credit, err := newCredit(store.DB())
	if err != nil {
		return fail("%v", err)
	}
	var sink ref.Sink
	switch cfg.sink {
	case "atomic":
		sink = store.Sink(credit)
	case "separate":
		if sink, err = OpenSink(cfg.path, credit); err != nil {
			return fail("%v", err)
		}
	default:
		return fail("%s=%q, want atomic or separate", envSink, cfg.sink)
	}

	var outMu sync.Mutex
	say := func(line string) {
		// One write per line: the parent reads whole lines, and a line
		// written before SIGKILL stays readable in the pipe.
		outMu.Lock()
		defer outMu.Unlock()
		os.Stdout.WriteString(line + "\n")
	}
	var stopOnce sync.Once
	stop := func(point string, key ref.Key) {
		if point != cfg.point || key != crashKey(cfg.at) {
			return
		}
		stopOnce.Do(func() {
			say(stopLine + point)
			// Sleep, not select{}: with every goroutine blocked the runtime
			// would exit with "deadlock" before the parent's SIGKILL lands.
			time.Sleep(time.Hour)
		})
	}
	settler := ref.NewSettler(ref.NewWindow(time.Minute, 4),
		&faultStore{PendingStore: store, stop: stop},
		ref.WithSink(&faultSink{Sink: sink, stop: stop}))

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
	say(startedLine)
	ctx := context.Background()
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
				key := crashKey(n)
				if _, err := settler.Apply(ctx, key, crashPayload(n), crashBase.Add(time.Duration(n)*time.Millisecond)); err != nil {
					errMu.Lock()
					errs = append(errs, fmt.Errorf("request %d: %w", n, err))
					errMu.Unlock()
					continue
				}
				stop(pointAfterCommit, key)
				say(ackLine + strconv.Itoa(n))
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fail("%v", err)
	}
	say(doneLine)
	return 0
}

// faultStore and faultSink stop the child at the fault points around the
// real calls.
type faultStore struct {
	ref.PendingStore
	stop func(point string, key ref.Key)
}

func (f *faultStore) Begin(ctx context.Context, c ref.Claim) (ref.State, bool, error) {
	f.stop(pointBeforeClaim, c.Key)
	st, created, err := f.PendingStore.Begin(ctx, c)
	if err == nil && created {
		f.stop(pointAfterClaim, c.Key)
	}
	return st, created, err
}

type faultSink struct {
	ref.Sink
	stop func(point string, key ref.Key)
}

func (f *faultSink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	err := f.Sink.Deliver(ctx, key, payload)
	if err == nil {
		f.stop(pointAfterSink, key)
	}
	return err
}

// childRun is what the parent saw of one child.
type childRun struct {
	acked   map[int]bool
	stopped string // the fault point it stopped at, if any
	killed  bool
	done    bool
	stderr  string
}

// runChild starts a child with cfg and kills it with SIGKILL when kill
// (called on every stdout line, with the number of acks so far) says so.
func runChild(t *testing.T, cfg childConfig, kill func(line string, acks int) bool) childRun {
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
		case strings.HasPrefix(line, ackLine):
			n, err := strconv.Atoi(strings.TrimPrefix(line, ackLine))
			if err != nil {
				t.Fatalf("child printed %q", line)
			}
			run.acked[n] = true
			acks++
		case strings.HasPrefix(line, stopLine):
			run.stopped = strings.TrimPrefix(line, stopLine)
		case line == doneLine:
			run.done = true
		}
		if !run.killed && !run.done && kill(line, acks) {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
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
	var ee *exec.ExitError
	switch {
	case run.killed:
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
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

// crashWant is what a fault-point run must find on disk after the kill,
// before recovery, for the request that stopped.
type crashWant struct {
	state     ref.State // its record (StateNew: no record)
	inLedger  bool
	recovered int // what Recover completes
}

// TestCrashKillAtFaultPoints kills the child at each fault point with each
// sink form, then recovers and re-sends; exactly-once must hold and the
// disk must show exactly what the point implies.
func TestCrashKillAtFaultPoints(t *testing.T) {
	const (
		n  = 8 // requests per child: a few before and after the stop
		at = 3 // the request that stops: three are acked before it
	)
	cases := []struct {
		sink, point string
		want        crashWant
	}{
		{"separate", pointBeforeClaim, crashWant{ref.StateNew, false, 0}},
		{"separate", pointAfterClaim, crashWant{ref.StateGranted, false, 1}},
		{"separate", pointAfterSink, crashWant{ref.StateGranted, true, 1}},
		{"separate", pointAfterCommit, crashWant{ref.StateDelivered, true, 0}},
		{"atomic", pointBeforeClaim, crashWant{ref.StateNew, false, 0}},
		{"atomic", pointAfterClaim, crashWant{ref.StateGranted, false, 1}},
		// Store.Sink moves the record to Delivered with the credit.
		{"atomic", pointAfterSink, crashWant{ref.StateDelivered, true, 0}},
		{"atomic", pointAfterCommit, crashWant{ref.StateDelivered, true, 0}},
	}
	for _, c := range cases {
		t.Run("sink="+c.sink+"/point="+c.point, func(t *testing.T) {
			cfg := childConfig{path: filepath.Join(t.TempDir(), "crash.db"), point: c.point, sink: c.sink, at: at, n: n, workers: 1}
			run := runChild(t, cfg, func(line string, _ int) bool { return strings.HasPrefix(line, stopLine) })
			if !run.killed || run.stopped != c.point {
				t.Fatalf("child was not killed at %s (stopped at %q, done=%v); stderr:\n%s", c.point, run.stopped, run.done, run.stderr)
			}
			for i := 0; i < n; i++ {
				if want := i < at; run.acked[i] != want {
					t.Fatalf("request %d acked=%v, want %v (one worker settles in order)", i, run.acked[i], want)
				}
			}
			v := openVerifier(t, cfg.path, cfg.sink)
			v.checkDurable(t, run.acked)
			st, inLedger := v.state(t, crashKey(at)), v.inLedger(t, crashKey(at))
			if st != c.want.state || inLedger != c.want.inLedger {
				t.Fatalf("after SIGKILL at %s: record %v, in ledger %v; want %v, %v", c.point, st, inLedger, c.want.state, c.want.inLedger)
			}
			if st == ref.StateGranted {
				// The dead node's lease still runs: no other node may
				// complete its grant yet.
				live := crashBase.Add(time.Duration(at)*time.Millisecond + ref.DefaultLease - time.Second)
				if got, err := v.settler.Recover(t.Context(), live); err != nil || got != 0 {
					t.Fatalf("Recover before the lease ended completed %d (err %v), want 0", got, err)
				}
			}
			if got := v.recoverAndResend(t, run.acked, n); got != c.want.recovered {
				t.Fatalf("Recover completed %d records, want %d", got, c.want.recovered)
			}
			v.checkExactlyOnce(t, n)
		})
	}
}

// TestCrashKillAtRandomMoments kills a child of four workers (duplicates
// racing) after a seeded number of acks plus a seeded delay, so the kill
// lands anywhere: inside SQLite's commit, between the ledger and the record,
// between two workers' transactions. The seed fixes those choices; where the
// kill lands still depends on scheduling, so a failure prints its seed and
// what the child had acked.
func TestCrashKillAtRandomMoments(t *testing.T) {
	const n = 40 // distinct requests (80 sends): long enough to be killed mid-run
	seeds := []uint64{1, 2, 3, 4}
	if *crashSeed != 0 {
		seeds = []uint64{*crashSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0xc4a54))
			killAt := rng.IntN(n) // acks seen before the kill (of 2n)
			delay := time.Duration(rng.IntN(2000)) * time.Microsecond
			cfg := childConfig{path: filepath.Join(t.TempDir(), "crash.db"), point: pointNone, sink: []string{"atomic", "separate"}[seed%2], n: n, workers: 4}
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("reproduce: go test -race -count=1 -run '^TestCrashKillAtRandomMoments$' ./ref/sqlite -crash.seed=%d (kill after %d acks + %v, sink=%s)", seed, killAt, delay, cfg.sink)
				}
			})
			run := runChild(t, cfg, func(line string, acks int) bool {
				if line != startedLine && !strings.HasPrefix(line, ackLine) || acks < killAt {
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
			v := openVerifier(t, cfg.path, cfg.sink)
			v.checkDurable(t, run.acked)
			v.recoverAndResend(t, run.acked, n)
			v.checkExactlyOnce(t, n)
		})
	}
}
