package engine_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The designs of this file touch the time package and goroutines as
// foreign code does; only a run inside a bubble (TestDesign's) judges them.

// clocked applies an increment only if time.Now() is the now it was given:
// it holds only where the two are one clock.
type clocked struct{}

func (clocked) Name() string                        { return "clocked" }
func (clocked) NewNode(_ int, e toyEnv) engine.Node { return clockedNode{e} }

type clockedNode struct{ e toyEnv }

func (n clockedNode) Deliver(now time.Time, m int) (engine.Ack, error) {
	if wall := time.Now(); !wall.Equal(now) {
		return engine.Nack, fmt.Errorf("time.Now() is %v, the delivery's now %v", wall, now)
	}
	return answer(n.e.Apply(m, keyOf(m)))
}

func (n clockedNode) Recover(now time.Time) error {
	if wall := time.Now(); !wall.Equal(now) {
		return fmt.Errorf("time.Now() is %v, Recover's now %v", wall, now)
	}
	return nil
}

// A run in a bubble reads the world's clock through the time package: at
// every attempt, at a paused call's resumption and in Recover at the drain
// (crash and pause families), time.Now() is the call's now. Outside a
// bubble (NoBubble, below) the same design loses every increment.
func TestBubbleClockIsTheWorlds(t *testing.T) {
	engine.TestDesign(t, toyWorld, toyDesign(clocked{}), engine.Dir(t.TempDir()), engine.Families(famDup, famCrash, famPause), engine.Schedules(20, 1))
}

// ticking starts a cleanup loop per node that nothing stops, as
// watermill's in-memory deduplication repository does.
type ticking struct{ keyed }

func (ticking) Name() string { return "ticking" }
func (ticking) NewNode(_ int, e toyEnv) engine.Node {
	go func() {
		tk := time.NewTicker(time.Second)
		for range tk.C {
		}
	}()
	return keyedNode{e}
}

// fastTicking starts a 1 ms cleanup loop per node: the runner's sleeps
// across the world's time wake it a thousand times a virtual second. Its
// nodes recover, so the runner sleeps to the drain (an hour on).
type fastTicking struct{ keyed }

func (fastTicking) Name() string { return "fast-ticking" }
func (fastTicking) NewNode(_ int, e toyEnv) engine.Node {
	go func() {
		tk := time.NewTicker(time.Millisecond)
		for range tk.C {
		}
	}()
	return fastTickingNode{keyedNode{e}}
}

type fastTickingNode struct{ keyedNode }

func (fastTickingNode) Recover(time.Time) error { return nil }

// spinning waits inside Deliver on a ticker for something that never comes.
type spinning struct{}

func (spinning) Name() string                    { return "spinning" }
func (spinning) NewNode(int, toyEnv) engine.Node { return spinningNode{} }
func (spinningNode) Deliver(time.Time, int) (engine.Ack, error) {
	tk := time.NewTicker(time.Millisecond)
	defer tk.Stop()
	for range tk.C {
	}
	return engine.Nack, nil
}

type spinningNode struct{}

// held is a lock no run will ever get: the test binary holds it.
var held = func() *sync.Mutex { var mu sync.Mutex; mu.Lock(); return &mu }()

// locking blocks inside Deliver on held: not durably blocked, so the
// bubble's clock stands still and only the wall-clock watchdog sees it.
type locking struct{}

func (locking) Name() string                    { return "locking" }
func (locking) NewNode(int, toyEnv) engine.Node { return lockingNode{} }

type lockingNode struct{}

func (lockingNode) Deliver(time.Time, int) (engine.Ack, error) {
	held.Lock()
	return engine.Nack, nil
}

// outside is a channel made outside every bubble: a goroutine waiting on it
// is not durably blocked.
var outside = make(chan struct{})

// waitingOutside leaves a goroutine per node waiting on outside.
type waitingOutside struct{ keyed }

func (waitingOutside) Name() string { return "waiting-outside" }
func (waitingOutside) NewNode(_ int, e toyEnv) engine.Node {
	go func() { <-outside }()
	return keyedNode{e}
}

// bubbleCases are run by TestBubbleChild in a child process, where each
// must fail, saying each of want.
var bubbleCases = map[string]struct {
	run  func(t *testing.T, dir string)
	want []string
}{
	"no-bubble": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(clocked{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1), engine.NoBubble())
		},
		want: []string{"NoLoss fails under dup", "time.Now() is"},
	},
	"leak": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(ticking{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1))
		},
		want: []string{"Responsive fails under dup", "goroutine(s) of the design still running after the run",
			"[chan receive (durable)] engine_test.ticking.NewNode.func1 (bubble_test.go:", "< created by engine_test.ticking.NewNode (bubble_test.go:",
			"To reproduce"},
	},
	"spin": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(spinning{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1))
		},
		want: []string{"Responsive fails under dup", "of the bubble's virtual time", "never returned", "To reproduce"},
	},
	"fast-ticker": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(fastTicking{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1), engine.RunWith(engine.RunOptions{Stall: 300 * time.Millisecond}))
		},
		// The hour to the drain is 3.6 million ticks: the sleep outlasts
		// 300 ms of wall time, and the message says why, not that the
		// clock cannot move.
		want: []string{"Responsive fails under dup", "while the runner slept the bubble's clock from", "a 1 ms ticker wakes 3,600,000 times", "engine_test.fastTicking.NewNode.func1 (bubble_test.go:"},
	},
	"lock": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(locking{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1), engine.RunWith(engine.RunOptions{Stall: 300 * time.Millisecond}))
		},
		want: []string{"Responsive fails under dup", "of wall time and the bubble's clock cannot move", "never returned"},
	},
	"wait-outside": {
		run: func(t *testing.T, dir string) {
			engine.TestDesign(t, toyWorld, toyDesign(waitingOutside{}), engine.Dir(dir), engine.Families(famDup), engine.Schedules(5, 1), engine.RunWith(engine.RunOptions{Stall: 300 * time.Millisecond}))
		},
		// The goroutine is there from the first node on: the bubble's
		// clock cannot move to the first event after time zero.
		want: []string{"Responsive fails under dup", "the bubble's clock cannot move", "[chan receive] engine_test.waitingOutside.NewNode.func1 (bubble_test.go:"},
	},
}

// TestBubbleChild is the child of TestBubbleReportsWhatFailsInIt.
func TestBubbleChild(t *testing.T) {
	name := os.Getenv("BUBBLE_CASE")
	if name == "" {
		t.Skip("runs only as the child of TestBubbleReportsWhatFailsInIt")
	}
	bubbleCases[name].run(t, t.TempDir())
}

// Leaks, a call spinning on a ticker, a call blocked on a lock and a
// goroutine left waiting on a channel from outside the run each fail
// Responsive with what keeps them, within seconds (the child's -timeout
// is the bound: a hang fails it), and a clocked design outside a bubble
// fails where it holds inside one.
func TestBubbleReportsWhatFailsInIt(t *testing.T) {
	for name, c := range bubbleCases {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBubbleChild$", "-test.v", "-test.timeout=60s")
			cmd.Env = append(os.Environ(), "BUBBLE_CASE="+name)
			out, err := cmd.CombinedOutput()
			took := time.Since(start)
			repro := fmt.Sprintf("BUBBLE_CASE=%s go test -run '^TestBubbleChild$' -v ./engine", name)
			if _, failed := err.(*exec.ExitError); !failed {
				t.Fatalf("the %s child did not fail (err %v); want it to (%s):\n%s", name, err, repro, out)
			}
			if strings.Contains(string(out), "panic: test timed out") {
				t.Fatalf("the %s child hung until its -timeout after %v (%s):\n%s", name, took, repro, out)
			}
			for _, w := range c.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the %s child's output lacks %q (%s):\n%s", name, w, repro, out)
				}
			}
		})
	}
}
