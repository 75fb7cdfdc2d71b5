package props

import (
	"fmt"
	"strings"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// Timeline renders h as text a reviewer reads top to bottom: the settlements
// (with every business field, so colliding signatures are visible), then one
// line per event, with each anomaly of r printed under the event that
// completes it.
func Timeline(h faults.History, r Report) string {
	return engine.Timeline(World, engine.History[faults.Schedule, faults.Detail](h), r)
}

// mermaid renders h as a mermaid sequenceDiagram (GitHub renders it in
// markdown): the sender, each node, the durable store and the ledger as
// participants; crashes, faults and anomalies as notes.
func mermaid(h faults.History, r Report) string {
	return engine.Mermaid(World, engine.History[faults.Schedule, faults.Detail](h), r)
}

// The settlement world's part of the renderings (World's GroundTruth,
// EventText, Participants, MermaidLine).

func groundTruth(h engine.History[faults.Schedule, faults.Detail]) string {
	var b strings.Builder
	s := h.Schedule
	b.WriteString("settlements:\n")
	planned := map[int]bool{}
	for _, d := range s.Deliveries {
		planned[d.Msg] = true
	}
	for _, st := range s.Settlements {
		note := ""
		if !planned[st.ID] {
			// Kept so the world stays whole (its round and seq place the
			// others); the schedule never delivers it.
			note = "  (not delivered in this schedule)"
		}
		fmt.Fprintf(&b, "  s%-3d player %d  room %d  round %d  match %d  %-7v  final %-5v  net %+d  seq %d%s\n",
			st.ID, st.Player, st.Room, st.Round, st.Match, st.Kind, st.Final, st.Net, st.Seq, note)
	}
	return b.String()
}

func eventText(h engine.History[faults.Schedule, faults.Detail], e faults.Event) string {
	switch e.Kind {
	case faults.EvCredit:
		errs := ""
		if e.Err != "" {
			errs = " (error: " + e.Err + ")"
		}
		res := "no-op (grant already in the ledger)"
		if e.Detail.Applied {
			res = "applied"
		}
		grant := "unkeyed"
		if e.Detail.Grant != "" {
			grant = "grant " + e.Detail.Grant
		}
		return fmt.Sprintf("s%d net %+d to room %d, %s: %s%s", e.Msg, netOf(h.Schedule, e.Msg), e.Detail.Room, grant, res, errs)
	case faults.EvState:
		return fmt.Sprintf("keeps %d entries (bound %d)", e.Detail.Size, e.Detail.Bound)
	}
	return faults.World.KindName(e.Kind)
}

func participants() string {
	return "    participant D as Durable store\n    participant L as Ledger\n"
}

func mermaidLine(h engine.History[faults.Schedule, faults.Detail], e faults.Event) string {
	n := fmt.Sprintf("N%d", e.Node)
	if e.Kind == faults.EvCredit {
		return fmt.Sprintf("%s->>L: credit %s", n, eventText(h, e))
	}
	return fmt.Sprintf("Note over %s: %s", n, eventText(h, e))
}

func netOf(s faults.Schedule, id int) int64 {
	if id < 0 || id >= len(s.Settlements) {
		return 0
	}
	return s.Settlements[id].Net
}
