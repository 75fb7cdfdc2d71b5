package engine

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// In-node dispatch (RunOptions.InNode). A Concurrent group normally runs
// one goroutine per node, so a node never has two calls at once. A real
// service does: its handler runs on a goroutine per request, and two copies
// of one settlement, or two settlements of one player, reach it at the
// same instant. With InNode every send of a same-instant group runs on a
// goroutine of its own, released together, several on one node, and the
// Go runtime interleaves them (in parallel, on real threads, inside a
// bubble too): not the baton, so Switches is ignored and the history is
// not reproducible from the schedule. Each env call yields first
// (runtime.Gosched), as a store round trip blocks the goroutine on I/O
// and the runtime runs another: without it the first goroutine would
// usually finish before the second started, and a check-then-act race
// across an env call would hide on a quiet machine.
//
// What a node's calls share is then the design's: its memory must be
// safe for concurrent use. The runner keeps its own part race-free:
//   - each call's state (its attempt, effects, faults) is the calling
//     goroutine's, found by goroutine id (callTable), since the design's
//     Env is bound to the node's port, not to a call;
//   - a world's Observer looks at a node after the whole group, call by
//     call in attempt order, not while its siblings run;
//   - a design's panic rebuilds its node after the group: the siblings in
//     flight finish on the node they started on, as a server that
//     recovers a handler's panic serves its other requests (an in-node
//     schedule injects no faults, so a panic is the only rebuild).
//
// A same-instant group of an in-node schedule is therefore a sample of
// the interleavings the runtime chose then: a counterexample replays its
// schedule, and a replay may need several tries to show the failure again
// (TestDesign says how many of SampledReplays did).

// callTable is a port's calls in flight, by goroutine, while the port's
// node runs several calls at once.
type callTable struct {
	mu sync.Mutex
	by map[uint64]*call
}

// goid is the calling goroutine's id, from its stack header ("goroutine
// 7 [running]:"): Go has no goroutine-local storage, and the design's Env
// carries no call, so this is how a port tells its calls apart. About a
// microsecond: paid only at the env calls of an in-node group.
func goid() uint64 {
	var buf [64]byte
	b := string(buf[:runtime.Stack(buf[:], false)])
	b = strings.TrimPrefix(b, "goroutine ")
	if i := strings.IndexByte(b, ' '); i >= 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseUint(b, 10, 64)
	return id
}

// current is the call running on this node for the calling goroutine: the
// port's one call, or, in an in-node group, the goroutine's own. A
// goroutine the design started itself (the contract says Env is called on
// Deliver's goroutine) gets a call of no attempt, of its own.
func (p *Port[X]) current() *call {
	t := p.multi
	if t == nil {
		return p.cur
	}
	id := goid()
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.by[id]; ok {
		return c
	}
	c := &call{attempt: -1, msg: -1}
	t.by[id] = c
	return c
}

// enter makes c the calling goroutine's call (begin), leave ends it (end).
func (t *callTable) enter(c *call) {
	id := goid()
	t.mu.Lock()
	t.by[id] = c
	t.mu.Unlock()
}

func (t *callTable) leave() {
	id := goid()
	t.mu.Lock()
	delete(t.by, id)
	t.mu.Unlock()
}

// observation is an Observer call an in-node group defers to its end.
type observation struct {
	node, attempt, msg int
	at                 time.Duration
}

// inNodeGroup runs items, one same-instant group, a goroutine each (see
// the top of this file), and stores each send's answer in acked.
func (r *runner[X]) inNodeGroup(items []item, acked []bool) {
	for _, it := range items {
		if p := r.ports[it.node]; p.multi == nil {
			p.multi = &callTable{by: map[uint64]*call{}}
		}
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	var esc escaped
	for i, it := range items {
		esc.goKept(&wg, func() {
			<-start
			acked[i], _ = r.attempt(it, nil)
		})
	}
	close(start)
	wg.Wait()
	for _, it := range items {
		r.ports[it.node].multi = nil
	}
	esc.raise()
	r.mu.Lock()
	rebuilds, seen := r.rebuilds, r.observed
	r.rebuilds, r.observed = nil, nil
	r.mu.Unlock()
	for _, rb := range rebuilds {
		r.rebuild(rb.node, rb.at)
	}
	if o, ok := r.sys.(Observer[X]); ok {
		slices.SortFunc(seen, func(a, b observation) int { return a.attempt - b.attempt })
		for _, s := range seen {
			o.AfterAttempt(r.ports[s.node], r.nodes[s.node], s.attempt, s.msg, s.at)
		}
	}
}

// afterAttempt is attempt's end for the world's Observer and a panic's
// rebuild of node n: at once, or, in an in-node group, deferred to the
// group's end (rebuild: true for a panic).
func (r *runner[X]) afterAttempt(n, a, msg int, at time.Duration, rebuild bool) {
	if r.inNode {
		r.mu.Lock()
		if rebuild {
			r.rebuilds = append(r.rebuilds, observation{node: n, at: at})
		}
		r.observed = append(r.observed, observation{node: n, attempt: a, msg: msg, at: at})
		r.mu.Unlock()
		return
	}
	if rebuild {
		r.rebuild(n, at)
	}
	if o, ok := r.sys.(Observer[X]); ok {
		o.AfterAttempt(r.ports[n], r.nodes[n], a, msg, at)
	}
}
