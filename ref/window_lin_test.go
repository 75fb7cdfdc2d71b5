package ref

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// winCall is one call in a concurrent history: what was called, with what,
// what it returned, and when, in ticks of a logical clock all goroutines
// share: inv is taken just before the call, ret just after it returned. A
// call that returned before another was invoked (ret < inv) must take effect
// before it.
type winCall struct {
	put      bool
	key, val uint64 // val: what a Put stores
	at       int64  // the call's now, ns after winT0
	gotVal   uint64 // Put: prev; Lookup: val
	gotOK    bool   // Put: existed; Lookup: ok
	inv, ret int64
	g        int // the goroutine that made it
}

func (c winCall) String() string {
	if c.put {
		return fmt.Sprintf("[%d,%d] g%d Put(%#x, %d, t0+%d) = (%d, %v)", c.inv, c.ret, c.g, c.key, c.val, c.at, c.gotVal, c.gotOK)
	}
	return fmt.Sprintf("[%d,%d] g%d Lookup(%#x, t0+%d) = (%d, %v)", c.inv, c.ret, c.g, c.key, c.at, c.gotVal, c.gotOK)
}

// winKeyState is the sequential model of one key: winModel's entry for it.
type winKeyState struct {
	set bool
	val uint64
	at  int64
}

// apply runs c on the model and reports whether the model returns what the
// window returned.
func (st winKeyState) apply(c *winCall, ttl int64) (winKeyState, bool) {
	live := st.set && c.at < st.at+ttl
	switch {
	case live:
		return st, c.gotOK && c.gotVal == st.val
	case c.put:
		return winKeyState{set: true, val: c.val, at: c.at}, !c.gotOK && c.gotVal == 0
	default:
		return st, !c.gotOK && c.gotVal == 0
	}
}

// winMaxCalls bounds a key's history: the checker keeps which calls it has
// placed as a 256-bit set.
const winMaxCalls = 256

// linearizable reports whether one key's history (sorted by inv) has a
// linearization: an order of its calls that respects real time (a call that
// returned before another was invoked comes first) and in which the
// sequential model returns what every call returned. It searches every order
// (Wing and Gong's algorithm, with Lowe's memo of the calls placed and the
// model state reached), so a false answer means no order exists.
func linearizable(calls []winCall, ttl int64) bool {
	if len(calls) > winMaxCalls {
		panic(fmt.Sprintf("linearizable: %d calls, at most %d", len(calls), winMaxCalls))
	}
	type memo struct {
		placed [winMaxCalls / 64]uint64
		st     winKeyState
	}
	var placed [winMaxCalls / 64]uint64
	isPlaced := func(i int) bool { return placed[i/64]&(1<<(i%64)) != 0 }
	seen := map[memo]bool{}
	var search func(st winKeyState, left int) bool
	search = func(st winKeyState, left int) bool {
		if left == 0 {
			return true
		}
		// A call can go next if no unplaced call returned before it was
		// invoked.
		first := int64(1<<63 - 1)
		for i := range calls {
			if !isPlaced(i) {
				first = min(first, calls[i].ret)
			}
		}
		for i := range calls {
			if calls[i].inv > first {
				break // sorted by inv: so are all later ones
			}
			if isPlaced(i) {
				continue
			}
			next, ok := st.apply(&calls[i], ttl)
			if !ok {
				continue
			}
			placed[i/64] |= 1 << (i % 64)
			if k := (memo{placed, next}); !seen[k] {
				seen[k] = true
				if search(next, left-1) {
					return true
				}
			}
			placed[i/64] &^= 1 << (i % 64)
		}
		return false
	}
	return search(winKeyState{}, len(calls))
}

func TestLinearizableAcceptsAndRejects(t *testing.T) {
	const ttl = 10
	put := func(inv, ret int64, val uint64, at int64, prev uint64, existed bool) winCall {
		return winCall{put: true, key: 1, val: val, at: at, gotVal: prev, gotOK: existed, inv: inv, ret: ret}
	}
	for _, c := range []struct {
		name  string
		calls []winCall
		want  bool
	}{
		{"two overlapping puts, the second sees the first", []winCall{put(1, 4, 7, 0, 0, false), put(2, 3, 8, 0, 7, true)}, true},
		{"two overlapping puts, both fresh", []winCall{put(1, 4, 7, 0, 0, false), put(2, 3, 8, 0, 0, false)}, false},
		{"a put after its ttl is fresh", []winCall{put(1, 2, 7, 0, 0, false), put(3, 4, 8, ttl, 0, false)}, true},
		{"a put 1ns before the ttl is not", []winCall{put(1, 2, 7, 0, 0, false), put(3, 4, 8, ttl-1, 0, false)}, false},
		{"real time: a lookup after a put returned sees it", []winCall{put(1, 2, 7, 0, 0, false), {key: 1, at: 1, inv: 3, ret: 4}}, false},
		{"a lookup overlapping the put may miss it", []winCall{put(1, 4, 7, 0, 0, false), {key: 1, at: 1, inv: 2, ret: 3}}, true},
	} {
		if got := linearizable(c.calls, ttl); got != c.want {
			t.Errorf("%s: linearizable = %v, want %v (go test -run=TestLinearizableAcceptsAndRejects ./ref/)", c.name, got, c.want)
		}
	}
}

// TestWindowIsLinearizable runs goroutines that put and look up a few keys
// concurrently and checks each key's history with linearizable. Time moves in
// phases: every call of a phase passes the same now, so the model needs no
// allowance for clocks that disagree, and entries expire exactly at a phase
// boundary (ttl is 3 phases), under concurrent calls. Filler puts of fresh
// keys (each must be fresh) keep the one-shard table growing, kicking and
// rebuilding while the checked keys are in it. A failure prints the key's
// history: the counterexample (schedules are the OS's, so a seed does not
// replay it; the history does).
func TestWindowIsLinearizable(t *testing.T) {
	const (
		goroutines  = 8
		rounds      = 100
		phases      = 12
		callsPerG   = 4  // checked calls per goroutine per phase
		fillersPerG = 24 // fresh-key puts per goroutine per phase
		keys        = 3  // checked keys per round
		phaseStep   = 1000
		ttl         = 3 * phaseStep
	)
	w := NewWindow(ttl, 1)
	var clock atomic.Int64
	var fresh atomic.Uint64
	var bad atomic.Int64
	for round := range rounds {
		key := func(i uint64) uint64 { return winKey(1<<40 | uint64(round)<<8 | i) }
		calls := make([][]winCall, goroutines)
		for phase := range phases {
			at := int64(round*phases+phase) * phaseStep
			now := winT0.Add(time.Duration(at))
			var wg sync.WaitGroup
			for g := range goroutines {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := uint64(round*1000+phase*10+g) + 1
					for i := range callsPerG + fillersPerG {
						rng = rng*6364136223846793005 + 1442695040888963407
						if i >= callsPerG {
							if _, existed := w.Put(winKey(1<<50|fresh.Add(1)), 1, now); existed {
								bad.Add(1)
							}
							continue
						}
						c := winCall{put: rng>>63 != 0, key: key(rng >> 32 % keys), val: rng >> 40, at: at, g: g}
						c.inv = clock.Add(1)
						if c.put {
							c.gotVal, c.gotOK = w.Put(c.key, c.val, now)
						} else {
							c.gotVal, c.gotOK = w.Lookup(c.key, now)
						}
						c.ret = clock.Add(1)
						calls[g] = append(calls[g], c)
					}
				}()
			}
			wg.Wait()
		}
		byKey := map[uint64][]winCall{}
		for _, cs := range calls {
			for _, c := range cs {
				byKey[c.key] = append(byKey[c.key], c)
			}
		}
		for k, cs := range byKey {
			slices.SortFunc(cs, func(a, b winCall) int { return int(a.inv - b.inv) })
			if !linearizable(cs, ttl) {
				var b strings.Builder
				for _, c := range cs {
					fmt.Fprintln(&b, c)
				}
				t.Fatalf("round %d: the history of key %#x has no linearization (ttl %dns, go test -race -run=TestWindowIsLinearizable ./ref/):\n%s", round, k, ttl, b.String())
			}
		}
	}
	if n := bad.Load(); n != 0 {
		t.Fatalf("%d fresh filler keys reported as existing (go test -race -run=TestWindowIsLinearizable ./ref/)", n)
	}
}

// TestWindowLookupNeverMissesALiveKeyWhileTheTableMoves watches a set of live
// keys while other goroutines pour fresh keys into the same one-shard table,
// so that entries are kicked between buckets and the table is rebuilt over
// and over: every Lookup and Put of a watched key must find it, whatever is
// moving around it. It aims at the moments the linearizability test rarely
// hits (a key in the middle of a kick walk or of a rebuild).
func TestWindowLookupNeverMissesALiveKeyWhileTheTableMoves(t *testing.T) {
	const (
		rounds  = 4 // each with a fresh window: the rebuilds of a growing table are where moves abound
		watched = 200
		fillers = 4
		readers = 4
		perFill = 20000
	)
	for round := range rounds {
		w := NewWindow(time.Hour, 1)
		for i := range watched {
			w.Put(winKey(1<<60|uint64(i)), uint64(i), winT0)
		}
		var stop atomic.Bool
		var misses atomic.Int64
		var fill, read sync.WaitGroup
		for g := range fillers {
			fill.Add(1)
			go func() {
				defer fill.Done()
				for i := range perFill {
					w.Put(winKey(uint64(round)<<50|uint64(g)<<40|uint64(i)), 1, winT0)
				}
			}()
		}
		for g := range readers {
			read.Add(1)
			go func() {
				defer read.Done()
				for i := uint64(g); !stop.Load(); i++ {
					k := i % watched
					var v uint64
					var ok bool
					if i%2 == 0 {
						v, ok = w.Lookup(winKey(1<<60|k), winT0)
					} else {
						v, ok = w.Put(winKey(1<<60|k), 1<<40, winT0)
					}
					if !ok || v != k {
						misses.Add(1)
					}
				}
			}()
		}
		fill.Wait()
		stop.Store(true)
		read.Wait()
		if n := misses.Load(); n != 0 {
			t.Fatalf("round %d: %d calls missed a live key, or saw another value, while the table moved (go test -race -run=TestWindowLookupNeverMissesALiveKeyWhileTheTableMoves ./ref/)", round, n)
		}
	}
}
