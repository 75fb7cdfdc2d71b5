package faults

import "github.com/onceproof/onceproof/engine"

// The settlement world's event kinds, after the engine's (engine.EvArrive
// ... engine.EvGiveUp, which every world's history records).
const (
	// EvCredit: an env.Credit call reached the ledger (Msg: the settlement
	// the ledger attributes it to; Detail: Room, Amount, Grant, Applied;
	// Err).
	EvCredit = engine.EvWorld
	// EvState: a sample of a Bounded node's memory (Detail: Size, Bound,
	// Load).
	EvState = engine.EvWorld + 1
)

// kindName names an event kind, the settlement world's included.
func kindName(k engine.EventKind) string {
	switch k {
	case EvCredit:
		return "credit"
	case EvState:
		return "state"
	}
	return k.String()
}

// Detail is the settlement world's part of an Event.
type Detail struct {
	Applied bool
	Room    uint32
	// Amount is, on EvCredit, the net amount the design credited
	// (negative: a debit).
	Amount int64
	Grant  string
	Size   int
	Bound  int
	// Load is, on EvState, the load the bound was computed from.
	Load Load
}

// Event is one entry of a History. Fields not meaningful for its Kind are
// zero, except Msg (the settlement) and Attempt which are -1 when there is
// none.
type Event = engine.Event[Detail]

// History is what a run produced: every arrival, effect, credit, fault,
// crash, recovery and ack, in order. The same schedule run twice gives the
// same history (in the concurrent family too: its interleaving is chosen by
// Schedule.Switches; only RunOptions.Free makes it the Go scheduler's).
// Exhausted: the budget ran out, verdicts are Unknown. Stalled: the
// watchdog gave up on the run (EvStall ends Events): the design blocked.
type History engine.History[Schedule, Detail]

// Credits counts the applied credits the ledger attributes to settlement id
// (EvCredit events with Applied, whichever node or recovery made them).
func (h History) Credits(id int) int {
	n := 0
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == EvCredit && e.Detail.Applied && e.Msg == id {
			n++
		}
	}
	return n
}

// Reached reports whether an attempt of settlement id made an env call that
// ran and could have taken effect (an EvCredit, or an EvEffect of an op not
// named by Read): from then on the design holds it. A sender that gives up
// (Schedule.GiveUp) on a settlement no attempt reached lost it itself:
// nothing the design did could have recorded it, so no Recover could
// credit it.
func (h History) Reached(id int) bool {
	r := h.ReachedEach()
	return id >= 0 && id < len(r) && r[id]
}

// ReachedEach is Reached of every settlement id, in one pass over the
// history (index id; ids past its end were not reached), for a property
// that asks it of many settlements of a long history.
func (h History) ReachedEach() []bool {
	reached := make([]bool, len(h.Schedule.Settlements))
	of := map[int]int{} // attempt -> the settlement it carries
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == engine.EvArrive && e.Msg >= 0:
			of[e.Attempt] = e.Msg
		case (e.Kind == engine.EvEffect && !isRead(e.Op) || e.Kind == EvCredit) && e.Attempt >= 0:
			if id, ok := of[e.Attempt]; ok {
				if id >= len(reached) {
					reached = append(reached, make([]bool, id+1-len(reached))...)
				}
				reached[id] = true
			}
		}
	}
	return reached
}
