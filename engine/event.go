package engine

import (
	"fmt"
	"time"
)

// EventKind is what an Event records. The engine's kinds are below EvWorld;
// a world numbers its own from EvWorld up (a settlement credit, a loot
// status change) and names them (World.KindName).
type EventKind uint8

const (
	// EvArrive: an attempt reaches a node (Attempt, Node, Msg, First,
	// Delivery).
	EvArrive EventKind = iota
	// EvEffect: an Env effect of the design's own (Port.Effect: a store
	// call) finished (Op, Err).
	EvEffect
	// EvFault: the runner injected a failure or timeout at Op (Fault).
	EvFault
	// EvCrash: the runner crashed the node at Op (Fault).
	EvCrash
	// EvRecover: a node was rebuilt (after a crash, or at drain) and its
	// Recover ran (Err).
	EvRecover
	// EvAck: the node answered the sender (Ack, Err).
	EvAck
	// EvBudget: the runner stopped before the schedule drained.
	EvBudget
	// EvPanic: the design panicked (Op is "deliver" or "recover", Err the
	// panic value and the design's frame). Inside Deliver the runner then
	// treats the node as crashed: it rebuilds it (EvRecover) and the sender
	// retries.
	EvPanic
	// EvStall: the watchdog gave up on a run that made no progress for
	// RunOptions.Stall (Err says why); it ends a Stalled history.
	EvStall
	// EvGiveUp: after the drain, the sender gave up on a message that
	// arrived and was never acked (Msg, Err).
	EvGiveUp
	// EvPause: the node stalls before Op (Fault is Pause; Err says for how
	// long); its next event comes that much later.
	EvPause
	// EvLeak: goroutines the design started were still running after the
	// run and its Close (Err names each with its stack); only a run inside
	// a bubble (TestDesign) can see them. It ends the history.
	EvLeak

	// EvWorld is the first kind a world may use for its own events.
	EvWorld EventKind = 16
)

var kindNames = [...]string{"arrive", "effect", "fault", "crash", "recover", "ack", "budget", "panic", "stall", "give-up", "pause", "leak"}

func (k EventKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("world%d", uint8(k-EvWorld))
}

// Ack is what a node answers the sender for one delivery. Nack (0) means
// "not done, send again"; every other value stops the sender's retries
// and is the world's to name (settlements: credited, duplicate, held;
// loot: accepted, refused, ...).
type Ack uint8

// Nack is the answer of an error and of a refusal to act now: the sender
// retries later.
const Nack Ack = 0

// Acked reports whether the sender stops retrying on a.
func (a Ack) Acked() bool { return a != Nack }

// Event is one entry of a History. Fields not meaningful for its Kind are
// zero, except Msg and Attempt which are -1 when there is none. Detail is
// the world's part of a world event (a credit's room and amount, an item
// delivered).
type Event[X any] struct {
	Seq     int // position in the history
	At      time.Duration
	Node    int
	Attempt int
	Msg     int
	// Delivery is, on EvArrive, the index of the planned delivery in
	// Frame.Deliveries, or -1 for a retry the sender added.
	Delivery int
	Kind     EventKind
	Fault    FaultKind
	Ack      Ack
	First    bool // EvArrive: the message's first arrival anywhere
	Op       string
	Err      string
	Detail   X
}

// Trace is what Run records: every arrival, effect, world event, fault,
// crash, pause, recovery and answer, in order. A world wraps it in its
// History with the schedule it ran.
type Trace[X any] struct {
	Events    []Event[X]
	Exhausted bool // the budget ran out: verdicts are Unknown
	// Stalled: the watchdog gave up on the run (EvStall ends Events): the
	// design blocked. Responsive fails; the other properties judge the
	// prefix as for an exhausted run.
	Stalled bool
}

// History is a run of design Design on Schedule, as its world judges it.
// The same schedule run twice gives the same history (concurrent groups
// too: their interleaving is chosen by Frame.Switches; only
// RunOptions.Free makes it the Go scheduler's).
type History[S, X any] struct {
	Design    string
	Schedule  S
	Events    []Event[X]
	Exhausted bool
	Stalled   bool
}
