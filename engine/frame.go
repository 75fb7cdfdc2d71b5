package engine

import (
	"fmt"
	"time"
)

// Epoch is virtual time zero. Nothing under test reads the wall clock: a
// schedule's times are offsets from Epoch and designs receive Epoch+At.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Frame is the part of a schedule every world shares: the family, the
// cluster's size, the planned deliveries of the world's messages (its
// settlements, its requests), the faults, and how the sender behaves. A
// world's schedule embeds it beside its ground truth.
type Frame struct {
	Family Family
	// Nodes is how many nodes the cluster runs (>= 1).
	Nodes int
	// Deliveries are the planned arrivals (first deliveries, duplicates,
	// replays), in nondecreasing At order. The sender adds retries on its
	// own.
	Deliveries []Delivery
	// Faults are injected at numbered attempts (see Fault).
	Faults []Fault
	// Outages are dependencies down for runs of consecutive calls (see
	// Outage); none in a Concurrent schedule.
	Outages []Outage
	// RetryAfter is how long the sender waits for an answer before it
	// sends again (to the next node, round robin, when Nodes > 1).
	RetryAfter time.Duration
	// MaxAttempts bounds the sender's sends of one message before the
	// drain, and again after it (see Run).
	MaxAttempts int
	// GiveUp makes the sender give up for good after MaxAttempts sends: it
	// does not resend at the drain, so only a design's Recover can complete
	// what a crash or a failure left unfinished.
	GiveUp bool
	// Concurrent runs every group of deliveries with the same At at once,
	// one goroutine per node. No faults are injected then. Run interleaves
	// the goroutines deterministically, as Switches says, unless
	// RunOptions.Free lets them run freely.
	Concurrent bool
	// Switches is the interleaving of a Concurrent schedule: the choices
	// of the deterministic scheduler, in order. At a choice (a moment when
	// more than one goroutine of a same-time group can run), the k-th
	// choice of the run picks runnable[Switches[k] % len(runnable)], the
	// runnable goroutines in the order of their first delivery in the
	// group; past the end of Switches the choice is 0. All zeros (or nil)
	// is the sequential order: each goroutine runs to completion before
	// the next starts, so a shrunk counterexample keeps only the switches
	// it needs. Empty unless Concurrent; every value >= 0.
	Switches []int
}

// Delivery is one planned arrival of a message at a node.
type Delivery struct {
	At   time.Duration // virtual time since Epoch
	Msg  int           // index of the world's message (a settlement, a request)
	Node int           // 0 <= Node < Frame.Nodes
}

// FaultKind is what happens at a fault point.
type FaultKind uint8

const (
	// CrashBefore crashes the node just before the effect runs.
	CrashBefore FaultKind = iota
	// CrashAfter crashes the node just after the effect ran.
	CrashAfter
	// FailBefore makes the effect fail without running (ErrInjected).
	FailBefore
	// TimeoutAfter runs the effect and then reports ErrTimeout.
	TimeoutAfter
	// Pause stalls the node for Fault.For of virtual time just before the
	// effect (a GC pause, a stop-the-world, a slow disk): the world goes on
	// meanwhile (other deliveries, retries, clocks, leases), then the
	// effect runs, late. Only in an attempt (Deliver), never in Recover.
	Pause
)

func (k FaultKind) String() string {
	switch k {
	case CrashBefore:
		return "crash-before"
	case CrashAfter:
		return "crash-after"
	case FailBefore:
		return "fail"
	case TimeoutAfter:
		return "timeout"
	case Pause:
		return "pause"
	}
	return "fault?"
}

// Fault is injected at one effect (Env call) of one attempt, or of one
// Recover call. Attempt n >= 0 is the n-th call of Node.Deliver in the
// run, and Attempt -(r+1) the r-th call of Recover (both 0-based, numbered
// the same way on every run; Recovery and RecoveryOf convert); with
// OnDelivery, Attempt is instead the index of a planned delivery (in
// Frame.Deliveries), and the fault fires in the attempt that carries it,
// however many retries came before. Effect k is the k-th env call within
// it (0-based). A crash whose Effect is at or past the number of effects a
// Deliver made fires after it returned: the answer is lost; past a
// Recover's effects it does not fire.
type Fault struct {
	Attempt int
	Effect  int
	Kind    FaultKind
	// For is how long a Pause stalls the node (> 0); zero for other kinds.
	For time.Duration
	// OnDelivery: Attempt names a planned delivery.
	OnDelivery bool
}

// Recovery is the Fault.Attempt of the r-th Recover call of a run.
func Recovery(r int) int { return -(r + 1) }

// RecoveryOf is the Recover call a Fault.Attempt < 0 names.
func RecoveryOf(attempt int) int { return -attempt - 1 }

// Point is the fault's place in the text form: "attempt=3 effect=1",
// "recover=0 effect=2" or "delivery=5 effect=1".
func (f Fault) Point() string {
	if f.OnDelivery {
		return fmt.Sprintf("delivery=%d effect=%d", f.Attempt, f.Effect)
	}
	if f.Attempt < 0 {
		return fmt.Sprintf("recover=%d effect=%d", RecoveryOf(f.Attempt), f.Effect)
	}
	return fmt.Sprintf("attempt=%d effect=%d", f.Attempt, f.Effect)
}

// Before reports whether fault a comes before fault b in Frame.Faults'
// order: recover=n ones first (the last Recover first), then attempt=n
// increasing, then delivery=n increasing; effects increasing within one.
func (a Fault) Before(b Fault) bool {
	if a.OnDelivery != b.OnDelivery {
		return b.OnDelivery
	}
	return a.Attempt < b.Attempt || (a.Attempt == b.Attempt && a.Effect < b.Effect)
}

// CompareFaults orders faults as Before does, for slices.SortStableFunc:
// -1 if a is before b, 1 if b is before a, 0 for faults at one point.
func CompareFaults(a, b Fault) int {
	switch {
	case a.Before(b):
		return -1
	case b.Before(a):
		return 1
	}
	return 0
}

// HasPause reports whether f injects a Pause anywhere.
func (f Frame) HasPause() bool {
	for _, x := range f.Faults {
		if x.Kind == Pause {
			return true
		}
	}
	return false
}
