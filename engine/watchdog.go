package engine

import (
	"sync"
	"time"
)

// The watchdog is one goroutine for the whole process, running while any
// run is in flight: it looks at each run's progress counter every
// watchdogTick and abandons a run whose counter has not moved for its
// RunOptions.Stall. One goroutine instead of a timer per run keeps a run's
// fixed cost to its own goroutine and channel (a run of a generated schedule
// takes about 100 us). It is the one place the runner reads the wall clock,
// and it never changes the history of a run that finishes.
var watchdog struct {
	mu      sync.Mutex
	runs    map[watched]struct{}
	running bool
}

// watched is a run the watchdog looks at: runners of every world's event
// type.
type watched interface {
	// moved reports whether the run progressed since the last look, and
	// notes when it last did.
	moved(now time.Time) bool
	// stalledFor reports whether the run has made no progress for its
	// RunOptions.Stall.
	stalledFor(now time.Time) bool
	// abandon gives up on the run.
	abandon()
}

func (r *runner[X]) moved(now time.Time) bool {
	if p := r.progress.Load(); p != r.seen || r.seenSince.IsZero() {
		r.seen, r.seenSince = p, now
		return true
	}
	return false
}

func (r *runner[X]) stalledFor(now time.Time) bool { return now.Sub(r.seenSince) >= r.stall }

// watchdogTick is how often the watchdog looks: a run is given up between
// its Stall and Stall + watchdogTick after its last progress. 20 ms is small
// against DefaultStall (5 s) and against the tests' stalls (100 ms), and 50
// looks a second over a few runs cost nothing.
const watchdogTick = 20 * time.Millisecond

func watch(r watched) {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if watchdog.runs == nil {
		watchdog.runs = map[watched]struct{}{}
	}
	watchdog.runs[r] = struct{}{}
	if !watchdog.running {
		watchdog.running = true
		go watchLoop()
	}
}

func unwatch(r watched) {
	watchdog.mu.Lock()
	delete(watchdog.runs, r)
	watchdog.mu.Unlock()
}

// watchLoop runs until no run is left to watch.
func watchLoop() {
	t := time.NewTicker(watchdogTick)
	defer t.Stop()
	var stalled []watched
	// Not the tick's own time: a tick delivered late (the loop waited on
	// mu, or the machine was busy) carries the time it fired, and a run
	// registered since would be stamped before it started, so given up up
	// to that lateness before its Stall.
	for range t.C {
		now := time.Now()
		watchdog.mu.Lock()
		if len(watchdog.runs) == 0 {
			watchdog.running = false
			watchdog.mu.Unlock()
			return
		}
		stalled = stalled[:0]
		for r := range watchdog.runs {
			if r.moved(now) {
				continue
			}
			if r.stalledFor(now) {
				stalled = append(stalled, r)
				delete(watchdog.runs, r)
			}
		}
		watchdog.mu.Unlock()
		for _, r := range stalled {
			r.abandon()
		}
	}
}

// runOn runs f on a goroutine of its own, reusing one that finished an
// earlier run if one is idle. A run's goroutine grows its stack to what a
// design needs (deferred recovers, a store's calls); a fresh goroutine per
// run copied it again every time, a sixth of a small run's cost. Up to
// idleRunners wait for work; a runner abandoned by the watchdog never
// comes back, and the pool starts another.
func runOn(f func()) {
	select {
	case w := <-idleRunners:
		w <- f
	default:
		w := make(chan func())
		go func() {
			for f := range w {
				f()
				select {
				case idleRunners <- w:
				default:
					return // enough idle runners already
				}
			}
		}()
		w <- f
	}
}

// idleRunners holds the runners waiting for a run: as many as runs go on at
// once in a matrix (one per worker) with room to spare.
var idleRunners = make(chan chan func(), 64)
