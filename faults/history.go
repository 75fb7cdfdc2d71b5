package faults

import "time"

// EventKind is what an Event records.
type EventKind uint8

const (
	// EvArrive: an attempt reaches a node (Attempt, Node, Settlement, First).
	EvArrive EventKind = iota
	// EvEffect: an env.Durable call finished (Op, Err).
	EvEffect
	// EvCredit: an env.Credit call reached the ledger (Settlement, Room,
	// Amount, Grant, Applied, Err).
	EvCredit
	// EvFault: the runner injected a failure or timeout at Op (Fault).
	EvFault
	// EvCrash: the runner crashed the node at Op (Fault).
	EvCrash
	// EvRecover: a node was rebuilt (after a crash, or at drain) and its
	// Recover ran (Err).
	EvRecover
	// EvAck: the node answered the sender (Ack, Err).
	EvAck
	// EvState: a sample of a Bounded node's memory (Size, Bound).
	EvState
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
	// EvGiveUp: after the drain, the sender gave up on a settlement that
	// arrived and was never acked (Settlement, Err).
	EvGiveUp
)

func (k EventKind) String() string {
	return [...]string{"arrive", "effect", "credit", "fault", "crash", "recover", "ack", "state", "budget", "panic", "stall", "give-up"}[k]
}

// Event is one entry of a History. Fields not meaningful for its Kind are
// zero, except Settlement and Attempt which are -1 when there is none.
type Event struct {
	Seq        int // position in the history
	At         time.Duration
	Node       int
	Attempt    int
	Settlement int
	// Delivery is, on EvArrive, the index of the planned delivery in
	// Schedule.Deliveries, or -1 for a retry the sender added.
	Delivery int
	// The one-byte fields sit together (and Room after them) so an Event
	// packs into fewer words: a history is mostly Events, and its size is
	// what a run allocates.
	Kind    EventKind
	Fault   FaultKind
	Ack     Ack
	First   bool // EvArrive: the settlement's first arrival anywhere
	Applied bool
	Room    uint32
	// Amount is, on EvCredit, the net amount the design credited (negative:
	// a debit).
	Amount int64
	Op     string
	Err    string
	Grant  string
	Size   int
	Bound  int
	// Load is, on EvState, the load the bound was computed from.
	Load Load
}

// History is what a run produced: every arrival, effect, credit, fault,
// crash, recovery and ack, in order. The same schedule run twice gives the
// same history (in the concurrent family too: its interleaving is chosen by
// Schedule.Switches; only RunOptions.Free makes it the Go scheduler's).
type History struct {
	Design    string
	Schedule  Schedule
	Events    []Event
	Exhausted bool // the budget ran out: verdicts are Unknown
	// Stalled: the watchdog gave up on the run (EvStall ends Events): the
	// design blocked. Responsive fails; the other properties judge the
	// prefix as for an exhausted run.
	Stalled bool
}

// Credits counts the applied credits the ledger attributes to settlement id
// (EvCredit events with Applied, whichever node or recovery made them).
func (h History) Credits(id int) int {
	n := 0
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == EvCredit && e.Applied && e.Settlement == id {
			n++
		}
	}
	return n
}

// Reached reports whether an attempt of settlement id made an env call that
// ran (an EvEffect or EvCredit of the attempt): from then on the design
// holds it. A sender that gives up (Schedule.GiveUp) on a settlement no
// attempt reached lost it itself: no design could have credited it.
func (h History) Reached(id int) bool {
	mine := map[int]bool{}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == EvArrive && e.Settlement == id:
			mine[e.Attempt] = true
		case (e.Kind == EvEffect || e.Kind == EvCredit) && e.Attempt >= 0 && mine[e.Attempt]:
			return true
		}
	}
	return false
}
