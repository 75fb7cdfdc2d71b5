package engine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Outage is one dependency of the world down for a run of consecutive
// calls: the first Calls calls of Dep made at or after From (virtual
// time) fail before they run, as a FailBefore would (an error wrapping
// ErrInjected: nothing happened), whichever attempt, retry or Recover makes
// them. A fault planned at such a call's point is not injected: the call
// never reached the dependency.
//
// An outage is counted in calls, not in time, because what a design gets
// wrong under one is how many failures in a row it survives (a retry loop
// or a compensation that gives up after a few), and a count reaches across
// the sender's retries and the drain's passes, an hour apart, where a time
// range would end before the first drain. The drain runs more passes while
// an outage fails calls (Run).
//
// Dep names the dependency: DepStore for every Effect (the design's own
// store), and for an Apply (a service of the world's) what the world's
// Dependent says of its op, or the op itself.
type Outage struct {
	Dep   string
	From  time.Duration
	Calls int
}

// DepStore is the dependency of every Effect: the design's store.
const DepStore = "store"

// Dependent is a System whose services' ops belong to named dependencies
// (a loot world's lock-set, lock-get and unlock are all the lock
// service's): an Outage of Dependency(op) fails an Apply of op.
type Dependent interface {
	Dependency(op string) string
}

// Limits of outages, checked by ValidateFrame. MaxOutages: a schedule
// models one or a few dependencies down (a world has a handful: its store
// and its services); 8 is room for every one of them twice. MaxOutageCalls:
// every call an outage fails is an event, and the drain may run a pass per
// failed call (Run), so 1024, as MaxEffectIndex, bounds the cost while
// leaving any run of failures a retry loop could meet.
const (
	MaxOutages     = 8
	MaxOutageCalls = 1024
)

func (o Outage) String() string {
	return fmt.Sprintf("outage dep=%s from=%s calls=%d", o.Dep, o.From, o.Calls)
}

// validateOutages is ValidateFrame's part for f.Outages.
func validateOutages(f Frame) error {
	if len(f.Outages) > MaxOutages {
		return fmt.Errorf("%d outages, over the limit of %d (MaxOutages)", len(f.Outages), MaxOutages)
	}
	if f.Concurrent && len(f.Outages) > 0 {
		return fmt.Errorf("a concurrent schedule has no outages (which call comes first in a group is not fixed)")
	}
	for i, o := range f.Outages {
		switch {
		case o.Dep == "" || strings.ContainsAny(o.Dep, " \t\n="):
			return fmt.Errorf("outage %d has dependency %q, want a name without spaces or '='", i, o.Dep)
		case o.From < 0 || o.From > MaxAt:
			return fmt.Errorf("outage %d is from %s, want 0..%s (MaxAt)", i, o.From, MaxAt)
		case o.Calls < 1 || o.Calls > MaxOutageCalls:
			return fmt.Errorf("outage %d fails %d calls, want 1..%d (MaxOutageCalls)", i, o.Calls, MaxOutageCalls)
		}
	}
	return nil
}

var outageShape = map[string]string{"dep": "<name>", "from": "<duration>", "calls": "<int>"}

// outage reads "outage dep=store from=10s calls=12".
func (p *frameParser) outage(args []string) error {
	kv, bare, err := Fields(p.line, args, []string{"dep", "from", "calls"}, outageShape)
	if err != nil {
		return err
	}
	if len(bare) > 0 {
		return p.errf("unexpected %q in an outage (want dep=, from= and calls=)", strings.Join(bare, " "))
	}
	if len(p.f.Outages) == MaxOutages {
		return p.errf("more than %d outages (MaxOutages)", MaxOutages)
	}
	o := Outage{Dep: kv["dep"]}
	if o.From, err = time.ParseDuration(kv["from"]); err != nil || o.From < 0 || o.From > MaxAt {
		return Bad(p.line, "from", fmt.Sprintf("<duration 0..%s (MaxAt)>", MaxAt), kv["from"])
	}
	if o.Calls, err = strconv.Atoi(kv["calls"]); err != nil || o.Calls < 1 || o.Calls > MaxOutageCalls {
		return Bad(p.line, "calls", fmt.Sprintf("<int 1..%d (MaxOutageCalls)>", MaxOutageCalls), kv["calls"])
	}
	if strings.ContainsAny(o.Dep, "=") {
		return Bad(p.line, "dep", "<name>", o.Dep)
	}
	p.f.Outages = append(p.f.Outages, o)
	return nil
}

// formatOutages is Format's part for f.Outages.
func formatOutages(b *strings.Builder, f Frame) {
	if len(f.Outages) == 0 {
		return
	}
	b.WriteString("\n# outages: the first calls= calls of a dependency at or after from= fail\n")
	for _, o := range f.Outages {
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
}

// outageState is a run's count of what each outage has still to fail, and
// of the calls all of them failed so far (the drain reads it).
type outageState struct {
	left   []int
	failed int
}

func newOutageState(f Frame) outageState {
	s := outageState{left: make([]int, len(f.Outages))}
	for i, o := range f.Outages {
		s.left[i] = o.Calls
	}
	return s
}

// down reports whether a call of dep at at fails for an outage, and
// counts it. Under r.mu: pauses and recoveries run calls on other
// goroutines, handed over by the runner.
func (r *runner[X]) down(dep string, at time.Duration) (Outage, bool) {
	if len(r.f.Outages) == 0 {
		return Outage{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, o := range r.f.Outages {
		if o.Dep == dep && at >= o.From && r.outages.left[i] > 0 {
			r.outages.left[i]--
			r.outages.failed++
			return o, true
		}
	}
	return Outage{}, false
}

// outageFailed is how many calls the outages have failed so far.
func (r *runner[X]) outageFailed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.outages.failed
}

// dependency is the dependency of Apply op: what the world's Dependent
// says, or op.
func (r *runner[X]) dependency(op string) string {
	if d, ok := r.sys.(Dependent); ok {
		return d.Dependency(op)
	}
	return op
}

// drainPasses is the most passes the drain of a world that asks for drains
// runs. It runs at least drains, and then more until drains passes in a
// row failed no call for an outage, so that work an outage cut short gets
// the passes a crash-cut one gets. That ends: a pass that failed a call
// used up one of the outages' calls, so at most sum(Calls) passes fail one,
// each followed by fewer than drains before the next; the bound is
// drains x (1 + sum(Calls)), and a frame without outages drains drains
// times, as before outages.
func drainPasses(f Frame, drains int) int {
	calls := 0
	for _, o := range f.Outages {
		calls += o.Calls
	}
	return drains * (1 + calls)
}

// dropOutages is the shrinker's candidate without outages i..j-1.
func dropOutages(f *Frame, i, j int) bool {
	if i >= j || j > len(f.Outages) {
		return false
	}
	f.Outages = slices.Delete(slices.Clone(f.Outages), i, j)
	if len(f.Outages) == 0 {
		f.Outages = nil
	}
	return true
}
