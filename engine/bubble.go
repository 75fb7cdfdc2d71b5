package engine

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A run in a bubble. TestDesign runs every run of a design inside its own
// testing/synctest bubble, so that the time package, inside the design and
// inside every library it calls, reads the world's clock:
//
//  1. The bubble's clock starts at synctest's 2000-01-01; the run first
//     sleeps it to Epoch, before the world builds the design's cluster, so
//     that a constructor's time.Now is the run's time zero.
//  2. Before each attempt, resumption and Recover at virtual time at, the
//     runner sleeps the bubble's clock to Epoch+at (sleepTo): time.Now()
//     inside the call is exactly the now the call is given, and a design's
//     own timers, tickers and context deadlines fire in between, when the
//     world's time passes them, and what they wake at the call's instant
//     runs to a standstill before the call (synctest.Wait). One clock, not two: a design that compares
//     its now with time.Now() sees them agree. A design that sleeps inside
//     a call moves the bubble's clock past the world's; the runner never
//     moves it back, so the next call then sees time.Now() ahead of its now
//     (the world does not wait for a node: its sends keep their times).
//  3. Goroutines the design leaves behind after the run (after the
//     System's Close) are a leak: the history gets an EvLeak event naming
//     each with its stack, which Responsive fails.
//
// Two watchdogs bound a run in a bubble. Inside it, the run's stall timer
// runs on the bubble's clock while the runner waits on the design (never
// while it sleeps to the next event): a call waiting on a ticker, a timer
// or a channel nothing sends on is given up after RunOptions.Stall of
// virtual time, in microseconds of wall time. Outside it, the process's
// watchdog (watchdog.go) gives up, after Stall of wall time without
// progress, on a bubble whose clock cannot move: a goroutine blocked on a
// lock, on I/O or in a busy loop is not durably blocked, so the bubble's
// time stands still. That bubble's goroutines cannot be stopped from
// outside: the caller gets a Stalled history, and the bubble is left
// where it is. A background ticker makes the runner's sleeps cost one wake
// a tick, about a microsecond of CPU. The runner sleeps to the drain
// (DrainAfter, an hour past the last send) only when the drain calls the
// design (drainCalls): then a 25 ms ticker costs 144,000 wakes a node a
// run (about 130 ms), and one of a millisecond or less makes the sleep
// outlast Stall of wall time: the process watchdog then ends the run as
// stalled, saying a ticker woke faster than the bubble could pass the span
// (sleepTo records the clock as it goes, so a clock that moves is told from
// one that cannot), and the bubble ticks on, burning its goroutine, until
// the process ends.
//
// The CLI matrix (RunMatrix, Check) cannot use a bubble: synctest needs a
// *testing.T. Its designs must read only the now they are given; a design
// that reads the wall clock there sees real time barely move, and the
// kit cannot tell (see README, "Wrapping foreign code").

// bubbleState is one bubbled run as the code outside its bubble sees it:
// the process watchdog looks at it (it is a watched), and the run inside
// hands it its runner and its result.
type bubbleState struct {
	// id is the bubble's synctest id, for picking its goroutines out of a
	// dump of all of them.
	id atomic.Int64
	// mu guards r and phase.
	mu sync.Mutex
	// r is the run's runner once the world called Run (nil while it
	// builds the System, and for a world that never calls Run).
	r     bubbled
	phase bubblePhase
	// The watchdog's own, as runner's: progress last seen, and since when.
	seen      uint64
	seenSince time.Time
	stall     time.Duration
	// wall is signalled (once) when the process watchdog gives up.
	wall chan struct{}
}

type bubblePhase uint8

const (
	phaseRun   bubblePhase = iota // the world is running the design
	phaseAfter                    // the run returned: the bubble should end now
)

// bubbled is what a bubbleState needs of its runner (a runner of any
// world's event type).
type bubbled interface {
	progressNow() uint64
	// stallEvents gives up on the run as abandon does and returns its
	// history with EvStall (nil if the run ended meanwhile), as an
	// []Event[X].
	stallEvents(why string) any
	// sleepSpan is the span of virtual time the runner is sleeping the
	// bubble's clock across, if it is and the clock has moved since it
	// began (ok).
	sleepSpan() (from, to time.Duration, ok bool)
}

func (r *runner[X]) progressNow() uint64 { return r.progress.Load() }

func (r *runner[X]) sleepSpan() (from, to time.Duration, ok bool) {
	r.vmu.Lock()
	defer r.vmu.Unlock()
	return r.vfrom, r.vto, r.vsleeping && r.vnow.Load() > int64(r.vfrom)
}

// chunkedSleep: sleepTo cuts a sleep longer than it into pieces of 1 ms,
// 2 ms, 4 ms, ... of virtual time, recording the bubble's clock after
// each (vnow), so that the process watchdog can tell a clock that moves
// too slowly (a fast ticker wakes in the span) from one that cannot move
// at all; doubling, so that the first record comes after a single wake of
// a 1 ms ticker. Only the long sleeps, the drain's (DrainAfter), are cut:
// log2(an hour / 1 ms) = 22 wakes of the runner, some microseconds a run.
const chunkedSleep = time.Minute

func (r *runner[X]) stallEvents(why string) any {
	if events := r.giveUp(why); events != nil {
		return events
	}
	return nil
}

func (b *bubbleState) setRunner(r bubbled) {
	b.mu.Lock()
	b.r = r
	b.mu.Unlock()
}

func (b *bubbleState) progressLocked() uint64 {
	if b.r == nil {
		return 0
	}
	return b.r.progressNow()
}

func (b *bubbleState) moved(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p := b.progressLocked(); p != b.seen || b.seenSince.IsZero() {
		b.seen, b.seenSince = p, now
		return true
	}
	return false
}

func (b *bubbleState) stalledFor(now time.Time) bool { return now.Sub(b.seenSince) >= b.stall }

func (b *bubbleState) abandon() {
	select {
	case b.wall <- struct{}{}:
	default:
	}
}

// sleepTo moves the bubble's clock to Epoch+at, if it is behind (a run in a
// bubble only; elsewhere the wall clock is no business of the runner's).
// The stall timer stops meanwhile: the sleep is the world's time passing,
// not the design's.
func (r *runner[X]) sleepTo(at time.Duration) {
	if r.bubble == nil {
		return
	}
	d := Epoch.Add(at).Sub(time.Now())
	if d <= 0 {
		return
	}
	r.vmu.Lock()
	r.vsleeping = true
	r.vfrom, r.vto = at-d, at
	r.vnow.Store(int64(at - d))
	r.vstall.Stop()
	r.vmu.Unlock()
	if d > chunkedSleep {
		for step := time.Millisecond; step < d; step *= 2 {
			time.Sleep(step)
			d -= step
			r.vnow.Store(int64(at - d))
		}
	}
	time.Sleep(d)
	// The design's own goroutines woken at this instant (a cleanup tick
	// due now) run before the call, not in whatever order the scheduler
	// picks: the same schedule makes the same history.
	synctest.Wait()
	r.vmu.Lock()
	r.vsleeping = false
	r.vseen = r.progress.Load()
	r.vstall.Reset(r.stall)
	r.vmu.Unlock()
}

// startBubbled starts the run's goroutine inside the bubble: a goroutine
// of its own (the pool's idle goroutines would outlive the bubble), the
// stall timer on the bubble's clock, and the runner handed to the code
// outside.
func (r *runner[X]) startBubbled(body func()) {
	r.vseen = r.progress.Load()
	r.vstall = time.AfterFunc(r.stall, r.checkVirtual)
	r.bubble.setRunner(r)
	go body()
}

// stopBubbled stops the stall timer once the run is over.
func (r *runner[X]) stopBubbled() {
	r.vmu.Lock()
	r.vdone = true
	r.vstall.Stop()
	r.vmu.Unlock()
}

// checkVirtual is the stall timer's: Stall of the bubble's time passed
// with the runner waiting on the design.
func (r *runner[X]) checkVirtual() {
	r.vmu.Lock()
	if r.vsleeping || r.vdone {
		r.vmu.Unlock()
		return
	}
	if p := r.progress.Load(); p != r.vseen {
		r.vseen = p
		r.vstall.Reset(r.stall)
		r.vmu.Unlock()
		return
	}
	r.vmu.Unlock()
	r.abandonWith(fmt.Sprintf("no progress for %s of the bubble's virtual time: the design waits inside Deliver or Recover on a timer, a ticker or a channel that nothing in the run will move", r.stall))
}

// bubbleResult is what a run inside a bubble hands out.
type bubbleResult[S, X any] struct {
	h   History[S, X]
	err *HarnessError
}

// inBubbles is w with every Run made inside a bubble of its own (see the
// comment at the top of this file), if on; t is the test the bubbles
// belong to.
func inBubbles[D Design, S, X any](t *testing.T, w World[D, S, X], on bool) World[D, S, X] {
	if !on {
		return w
	}
	run := w.Run
	w.Run = func(d D, s S, o RunOptions) History[S, X] { return runInBubble(t, d, s, o, run) }
	return w
}

// errBubbleLeft is the panic message synctest.Test raises when goroutines
// of the bubble remain, durably blocked, after its function returned.
const errBubbleLeft = "main bubble goroutine has exited but blocked goroutines remain"

// runInBubble runs run(d, s, o) in a new bubble, on a goroutine of its own
// (synctest.Test waits for every goroutine of its bubble, and one that
// cannot end would hold the caller forever), and returns its history with
// an EvLeak event if goroutines of the bubble outlived it. A harness error
// of the run is raised again here, on the caller's goroutine.
func runInBubble[D Design, S, X any](t *testing.T, d D, s S, o RunOptions, run func(D, S, RunOptions) History[S, X]) History[S, X] {
	b := &bubbleState{stall: o.Stall, wall: make(chan struct{}, 1)}
	if b.stall <= 0 {
		b.stall = DefaultStall
	}
	o.bubble = b
	res := make(chan bubbleResult[S, X], 1)
	ended := make(chan any, 1) // synctest.Test returned: nil, or its panic
	watch(b)                   // from outside the bubble: the watchdog's goroutine must not be the bubble's
	defer unwatch(b)
	go func() {
		defer func() { ended <- recover() }()
		synctest.Test(t, func(*testing.T) {
			time.Sleep(Epoch.Sub(time.Now()))
			b.id.Store(bubbleID())
			var h History[S, X]
			e := catch(func() { h = run(d, s, o) })
			b.mu.Lock()
			b.phase = phaseAfter
			b.mu.Unlock()
			res <- bubbleResult[S, X]{h, e}
		})
	}()
	var r bubbleResult[S, X]
	select {
	case r = <-res:
	case v := <-ended:
		select {
		case r = <-res:
			// The bubble ended after its run handed out its result (the
			// select may see both at once): judge the end below.
			ended <- v
		default:
		}
		if r.h.Events != nil || r.err != nil {
			break
		}
		// The bubble ended before the run returned: synctest found every
		// goroutine blocked with no timer left, before the runner started
		// its own (the world was building the design's cluster).
		panic(HarnessError{Value: fmt.Sprintf("the run's bubble deadlocked before the run started (the design's NewCluster or a node's constructor waits on something nothing sends): %v", v)})
	case <-b.wall:
		b.mu.Lock()
		rr := b.r
		b.mu.Unlock()
		why := fmt.Sprintf("no progress for %s of wall time and the bubble's clock cannot move: a goroutine of the design is blocked on a lock, on I/O or on a channel made outside the run, or spins; it is left running; the design's goroutines:%s", b.stall, stackList(designStacks(b.id.Load())))
		if rr != nil {
			if from, to, ok := rr.sleepSpan(); ok {
				why = fastTicker(b.stall, from, to) + stackList(designStacks(b.id.Load()))
			}
		}
		if rr == nil {
			panic(HarnessError{Value: "the run's bubble stopped before the run started: " + why})
		}
		if events, ok := rr.stallEvents(why).([]Event[X]); ok {
			return History[S, X]{Design: d.Name(), Schedule: s, Events: events, Stalled: true}
		}
		// The run ended just as the watchdog gave up: take its result.
		r = <-res
	}
	if r.err != nil {
		panic(*r.err)
	}
	h := r.h
	select {
	case v := <-ended:
		if v == nil || h.Stalled {
			// A stalled run's goroutine was abandoned on purpose:
			// Responsive fails on EvStall already.
			return h
		}
		if !strings.Contains(fmt.Sprint(v), errBubbleLeft) {
			panic(v)
		}
		return withLeak(h, leakedStacks(b.id.Load()), "")
	case <-b.wall:
		if h.Stalled {
			return h
		}
		h = withLeak(h, leakedStacks(b.id.Load()), "not durably blocked (a lock, I/O, a channel made outside the run, or a busy loop), so its bubble cannot end; it is left running")
		// Stalled: the cell stops here, as for any run the watchdog gave
		// up on, rather than wait a whole Stall again on every run.
		h.Stalled = true
		return h
	}
}

// fastTicker is why a run stalled while the runner slept the bubble's
// clock from from to to: the clock moves, but the design's goroutines
// wake so often in the span that the sleep outlasts stall of wall time.
func fastTicker(stall, from, to time.Duration) string {
	return fmt.Sprintf("no progress for %s of wall time while the runner slept the bubble's clock from %s to %s (the world's time passing to its next event): "+
		"goroutines of the design woke in that span faster than the bubble could pass it, a ticker or timer loop of the design or of a library it calls; "+
		"one of period p wakes span/p times, each a few microseconds of CPU, and a run spans at least DrainAfter (%s): a 1 ms ticker wakes 3,600,000 times in it; "+
		"give the loop a longer period, stop it in the System's Close, or run the design with NoBubble; the bubble is left ticking; the design's goroutines:", stall, from, to, DrainAfter)
}

// bubbleID is the synctest id of the calling goroutine's bubble, from its
// stack header ("goroutine 7 [running, synctest bubble 3]:"); 0 if none.
func bubbleID() int64 {
	var buf [128]byte
	header := string(buf[:runtime.Stack(buf[:], false)])
	_, rest, ok := strings.Cut(header, ", synctest bubble ")
	if !ok {
		return 0
	}
	end := strings.IndexAny(rest, "], ")
	if end < 0 {
		return 0
	}
	id, _ := strconv.ParseInt(rest[:end], 10, 64)
	return id
}

// NoBubble runs TestDesign's runs outside testing/synctest bubbles, as the
// CLI matrix does: for a design whose clients were made before the test
// and keep goroutines of their own (a database pool, a network client
// watching a context), which a bubble forbids to touch the run's
// channels and timers. The design must then read only the now it is given;
// a goroutine it leaves behind goes unseen.
func NoBubble() Option { return func(c *config) { c.noBubble = true } }

// RunInBubble is w.Run(d, s, o) made as TestDesign makes every run: inside
// a testing/synctest bubble of its own, whose clock is the world's, with
// an EvLeak event at the end if the design left goroutines running. A
// test replays one schedule with it as the kit saw it.
func RunInBubble[D Design, S, X any](t *testing.T, w World[D, S, X], d D, s S, o RunOptions) History[S, X] {
	return runInBubble(t, d, s, o, w.Complete().Run)
}
