package faults

import "time"

// Schedule is one run of the world, as data: it prints to text (Format) and
// parses back (Parse), so a counterexample is a file you can read, diff, edit
// and replay.
type Schedule struct {
	Family Family
	// Nodes is how many settler nodes the cluster runs (>= 1).
	Nodes int
	// Settlements is the ground truth; Settlements[i].ID == i.
	Settlements []Settlement
	// Deliveries are the planned arrivals (first deliveries, duplicates,
	// replays), in nondecreasing At order. The sender adds retries on its own.
	Deliveries []Delivery
	// Faults are injected at numbered attempts (see Fault).
	Faults []Fault
	// RetryAfter is how long the sender waits for an ack before it sends
	// again (to the next node, round robin, when Nodes > 1).
	RetryAfter time.Duration
	// MaxAttempts bounds the sender's sends of one settlement before the
	// drain, and again after it (see Run).
	MaxAttempts int
	// GiveUp makes the sender give up for good after MaxAttempts sends: it
	// does not resend at the drain, so only a design's Recover can complete
	// what a crash or a failure left unfinished.
	GiveUp bool
	// Concurrent runs every group of deliveries with the same At at once,
	// one goroutine per node (the concurrent family). No faults are
	// injected then. Run interleaves the goroutines deterministically, as
	// Switches says, unless RunOptions.Free lets them run freely.
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

// Delivery is one planned arrival of a settlement at a node.
type Delivery struct {
	At         time.Duration // virtual time since Epoch
	Settlement int           // index into Schedule.Settlements
	Node       int           // 0 <= Node < Schedule.Nodes
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
	}
	return "fault?"
}

// Fault is injected at one effect (env.Durable or env.Credit call) of one
// attempt, or of one Recover call. Attempt n >= 0 is the n-th call of
// Node.Deliver in the run, and Attempt -(r+1) the r-th call of Recover
// (both 0-based, numbered the same way on every run; Recovery and
// RecoveryOf convert). Effect k is the k-th env call within it (0-based). A
// crash whose Effect is at or past the number of effects a Deliver made
// fires after it returned: the ack is lost (the "after commit, before ack"
// point); past a Recover's effects it does not fire.
type Fault struct {
	Attempt int
	Effect  int
	Kind    FaultKind
}

// Recovery is the Fault.Attempt of the r-th Recover call of a run.
func Recovery(r int) int { return -(r + 1) }

// RecoveryOf is the Recover call a Fault.Attempt < 0 names.
func RecoveryOf(attempt int) int { return -attempt - 1 }
