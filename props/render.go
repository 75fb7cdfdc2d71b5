package props

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onceproof/onceproof/faults"
)

// Timeline renders h as text a reviewer reads top to bottom: the settlements
// (with every business field, so colliding signatures are visible), then one
// line per event, with each anomaly of r printed under the event that
// completes it.
func Timeline(h faults.History, r Report) string {
	var b strings.Builder
	s := h.Schedule
	fmt.Fprintf(&b, "design %s, family %s, %d node(s)\n", h.Design, s.Family, s.Nodes)
	b.WriteString("settlements:\n")
	planned := map[int]bool{}
	for _, d := range s.Deliveries {
		planned[d.Settlement] = true
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
	b.WriteString("events:\n")
	notes := anomaliesByEvent(r)
	for _, e := range h.Events {
		att := "    "
		if e.Attempt >= 0 {
			att = fmt.Sprintf("#%-3d", e.Attempt)
		}
		fmt.Fprintf(&b, "  %4d  %-8v n%d  %s %-8v %s\n", e.Seq, e.At, e.Node, att, e.Kind, eventText(h, e))
		for _, a := range notes[e.Seq] {
			fmt.Fprintf(&b, "        !! %s: %s\n", a.Property, a.Explain)
		}
	}
	if h.Exhausted {
		b.WriteString("the budget ran out before the schedule drained\n")
	}
	b.WriteString("verdicts:\n")
	for _, v := range r {
		fmt.Fprintf(&b, "  %-12s %v\n", v.Property, v.Outcome)
	}
	return b.String()
}

// eventText is the part of a timeline line after the event kind.
func eventText(h faults.History, e faults.Event) string {
	errs := ""
	if e.Err != "" {
		errs = " (error: " + e.Err + ")"
	}
	switch e.Kind {
	case faults.EvArrive:
		if e.First {
			return fmt.Sprintf("s%d (first arrival)", e.Settlement)
		}
		return fmt.Sprintf("s%d", e.Settlement)
	case faults.EvEffect:
		if e.Err == "" {
			return e.Op + " ok"
		}
		return e.Op + errs
	case faults.EvCredit:
		res := "no-op (grant already in the ledger)"
		if e.Applied {
			res = "applied"
		}
		grant := "unkeyed"
		if e.Grant != "" {
			grant = "grant " + e.Grant
		}
		return fmt.Sprintf("s%d net %+d to room %d, %s: %s%s", e.Settlement, netOf(h, e.Settlement), e.Room, grant, res, errs)
	case faults.EvFault:
		return fmt.Sprintf("%v at %s", e.Fault, e.Op)
	case faults.EvCrash:
		if e.Op == faults.OpAck {
			return "node crashes after Deliver returned: the ack is lost, and so is its memory"
		}
		return fmt.Sprintf("node crashes (%v at %s), its memory is lost", e.Fault, e.Op)
	case faults.EvRecover:
		if e.Err != "" {
			return "node rebuilt, Recover" + errs
		}
		return "node rebuilt, Recover ran"
	case faults.EvAck:
		return fmt.Sprintf("s%d answered %v%s", e.Settlement, e.Ack, errs)
	case faults.EvState:
		return fmt.Sprintf("keeps %d entries (bound %d)", e.Size, e.Bound)
	case faults.EvBudget:
		return "budget ran out" + errs
	case faults.EvPanic:
		return fmt.Sprintf("the design panicked in %s: %s", e.Op, e.Err)
	}
	return e.Kind.String()
}

func netOf(h faults.History, id int) int64 {
	if id < 0 || id >= len(h.Schedule.Settlements) {
		return 0
	}
	return h.Schedule.Settlements[id].Net
}

// anomaliesByEvent files each anomaly under the last event it names.
func anomaliesByEvent(r Report) map[int][]Anomaly {
	m := map[int][]Anomaly{}
	for _, v := range r {
		for _, a := range v.Anomalies {
			last := -1
			for _, s := range a.Events {
				if s > last {
					last = s
				}
			}
			m[last] = append(m[last], a)
		}
	}
	return m
}

// Mermaid renders h as a mermaid sequenceDiagram (GitHub renders it in
// markdown): the sender, each node, the durable store and the ledger as
// participants; crashes, faults and anomalies as notes.
func Mermaid(h faults.History, r Report) string {
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	b.WriteString("    participant S as Sender\n")
	nodes := map[int]bool{}
	for i := 0; i < h.Schedule.Nodes; i++ {
		nodes[i] = true
	}
	for _, e := range h.Events {
		if e.Kind != faults.EvBudget {
			nodes[e.Node] = true
		}
	}
	ids := make([]int, 0, len(nodes))
	for n := range nodes {
		ids = append(ids, n)
	}
	sort.Ints(ids)
	for _, n := range ids {
		fmt.Fprintf(&b, "    participant N%d as Node %d\n", n, n)
	}
	b.WriteString("    participant D as Durable store\n")
	b.WriteString("    participant L as Ledger\n")
	notes := anomaliesByEvent(r)
	for _, e := range h.Events {
		n := fmt.Sprintf("N%d", e.Node)
		var line string
		switch e.Kind {
		case faults.EvArrive:
			first := ""
			if e.First {
				first = " first"
			}
			line = fmt.Sprintf("S->>%s: t=%v attempt %d s%d%s", n, e.At, e.Attempt, e.Settlement, first)
		case faults.EvEffect:
			line = fmt.Sprintf("%s->>D: %s", n, eventText(h, e))
		case faults.EvCredit:
			line = fmt.Sprintf("%s->>L: credit %s", n, eventText(h, e))
		case faults.EvFault:
			line = fmt.Sprintf("Note over %s: injected %s", n, eventText(h, e))
		case faults.EvCrash:
			line = fmt.Sprintf("Note over %s: CRASH %v at %s", n, e.Fault, e.Op)
			if e.Op == faults.OpAck {
				line = fmt.Sprintf("Note over %s: CRASH before the ack, the ack is lost", n)
			}
		case faults.EvRecover:
			line = fmt.Sprintf("Note over %s: %s", n, eventText(h, e))
		case faults.EvAck:
			line = fmt.Sprintf("%s-->>S: s%d %v", n, e.Settlement, e.Ack)
			if e.Err != "" {
				line += " (error)"
			}
		case faults.EvState:
			line = fmt.Sprintf("Note over %s: %s", n, eventText(h, e))
		case faults.EvBudget:
			line = "Note over S: budget ran out"
		case faults.EvPanic:
			line = fmt.Sprintf("Note over %s: PANIC in %s", n, e.Op)
		}
		b.WriteString("    " + mermaidSafe(line) + "\n")
		for _, a := range notes[e.Seq] {
			over := "S"
			if e.Kind != faults.EvBudget {
				over = n
			}
			b.WriteString("    " + mermaidSafe(fmt.Sprintf("Note over %s: %s violated. %s", over, a.Property, a.Explain)) + "\n")
		}
	}
	return b.String()
}

// mermaidSafe drops the characters mermaid's sequenceDiagram parser treats
// specially inside a message: ';' ends a statement, '#' starts an entity
// code, and angle brackets are read as HTML.
func mermaidSafe(s string) string {
	i := strings.Index(s, ":") + 1 // the arrow or note before the first ':' is syntax, not text
	return s[:i] + mermaidText.Replace(s[i:])
}

var mermaidText = strings.NewReplacer(";", ",", "#", "no.", "<", "(", ">", ")")
