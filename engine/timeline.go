package engine

import (
	"fmt"
	"sort"
	"strings"
)

// Timeline renders h as text a reviewer reads top to bottom: the world's
// ground truth (with every field, so colliding values are visible), then
// one line per event, with each anomaly of r printed under the event that
// completes it.
func Timeline[D Design, S, X any](w World[D, S, X], h History[S, X], r Report) string {
	w = w.Complete()
	var b strings.Builder
	f := w.Frame(&h.Schedule)
	fmt.Fprintf(&b, "design %s, family %s, %d node(s)\n", h.Design, f.Family, f.Nodes)
	b.WriteString(w.GroundTruth(h))
	b.WriteString("events:\n")
	notes := anomaliesByEvent(r)
	for _, e := range h.Events {
		att := "    "
		if e.Attempt >= 0 {
			att = fmt.Sprintf("#%-3d", e.Attempt)
		}
		fmt.Fprintf(&b, "  %4d  %-8v n%d  %s %-8s %s\n", e.Seq, e.At, e.Node, att, kindName(w, e.Kind), eventText(w, h, e))
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

func kindName[D Design, S, X any](w World[D, S, X], k EventKind) string {
	if k >= EvWorld {
		return w.KindName(k)
	}
	return k.String()
}

// eventText is the part of a timeline line after the event kind.
func eventText[D Design, S, X any](w World[D, S, X], h History[S, X], e Event[X]) string {
	errs := ""
	if e.Err != "" {
		errs = " (error: " + oneLine(e.Err) + ")"
	}
	letter := w.Messages(h.Schedule).Letter
	switch e.Kind {
	case EvArrive:
		if e.First {
			return fmt.Sprintf("%s%d (first arrival)", letter, e.Msg)
		}
		return fmt.Sprintf("%s%d", letter, e.Msg)
	case EvEffect:
		if e.Err == "" {
			return e.Op + " ok"
		}
		return e.Op + errs
	case EvFault:
		return fmt.Sprintf("%v at %s", e.Fault, e.Op)
	case EvCrash:
		switch e.Op {
		case OpAck:
			return "node crashes after Deliver returned: the ack is lost, and so is its memory"
		case OpPaused:
			return "the node crashed while this call was paused: the call is lost with it"
		}
		return fmt.Sprintf("node crashes (%v at %s), its memory is lost", e.Fault, e.Op)
	case EvRecover:
		if e.Err != "" {
			return "node rebuilt, Recover" + errs
		}
		return "node rebuilt, Recover ran"
	case EvAck:
		return fmt.Sprintf("%s%d answered %s%s", letter, e.Msg, w.AckName(e.Ack), errs)
	case EvBudget:
		return "budget ran out" + errs
	case EvPanic:
		return fmt.Sprintf("the design panicked in %s: %s", e.Op, e.Err)
	case EvPause:
		return fmt.Sprintf("%s before %s", e.Err, e.Op)
	}
	if e.Kind >= EvWorld {
		return w.EventText(h, e)
	}
	return e.Kind.String()
}

// oneLine keeps an error on its timeline line (a design's error may hold
// a multi-line diff).
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
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
// markdown): the sender, each node and the world's participants (a
// durable store, a ledger); crashes, faults and anomalies as notes.
func Mermaid[D Design, S, X any](w World[D, S, X], h History[S, X], r Report) string {
	w = w.Complete()
	var b strings.Builder
	b.WriteString("sequenceDiagram\n")
	b.WriteString("    participant S as Sender\n")
	nodes := map[int]bool{}
	for i := 0; i < w.Frame(&h.Schedule).Nodes; i++ {
		nodes[i] = true
	}
	for _, e := range h.Events {
		if e.Kind != EvBudget {
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
	b.WriteString(w.Participants())
	letter := w.Messages(h.Schedule).Letter
	notes := anomaliesByEvent(r)
	for _, e := range h.Events {
		n := fmt.Sprintf("N%d", e.Node)
		var line string
		switch e.Kind {
		case EvArrive:
			first := ""
			if e.First {
				first = " first"
			}
			line = fmt.Sprintf("S->>%s: t=%v attempt %d %s%d%s", n, e.At, e.Attempt, letter, e.Msg, first)
		case EvEffect:
			line = fmt.Sprintf("%s->>D: %s", n, eventText(w, h, e))
		case EvFault:
			line = fmt.Sprintf("Note over %s: injected %s", n, eventText(w, h, e))
		case EvCrash:
			switch e.Op {
			case OpAck:
				line = fmt.Sprintf("Note over %s: CRASH before the ack, the ack is lost", n)
			case OpPaused:
				line = fmt.Sprintf("Note over %s: the paused call died with its node", n)
			default:
				line = fmt.Sprintf("Note over %s: CRASH %v at %s", n, e.Fault, e.Op)
			}
		case EvRecover:
			line = fmt.Sprintf("Note over %s: %s", n, eventText(w, h, e))
		case EvAck:
			line = fmt.Sprintf("%s-->>S: %s%d %s", n, letter, e.Msg, w.AckName(e.Ack))
			if e.Err != "" {
				line += " (error)"
			}
		case EvBudget:
			line = "Note over S: budget ran out"
		case EvPanic:
			line = fmt.Sprintf("Note over %s: PANIC in %s", n, e.Op)
		case EvPause:
			line = fmt.Sprintf("Note over %s: PAUSE, %s", n, eventText(w, h, e))
		default:
			if e.Kind >= EvWorld {
				line = w.MermaidLine(h, e)
			}
		}
		b.WriteString("    " + MermaidSafe(line) + "\n")
		for _, a := range notes[e.Seq] {
			over := "S"
			if e.Kind != EvBudget {
				over = n
			}
			b.WriteString("    " + MermaidSafe(fmt.Sprintf("Note over %s: %s violated. %s", over, a.Property, a.Explain)) + "\n")
		}
	}
	return b.String()
}

// MermaidSafe drops the characters mermaid's sequenceDiagram parser treats
// specially inside a message: ';' ends a statement, '#' starts an entity
// code, and angle brackets are read as HTML.
func MermaidSafe(s string) string {
	i := strings.Index(s, ":") + 1 // the arrow or note before the first ':' is syntax, not text
	return s[:i] + mermaidText.Replace(s[i:])
}

var mermaidText = strings.NewReplacer(";", ",", "#", "no.", "<", "(", ">", ")")

// Size says how big a schedule is: "3 settlements, 5 deliveries, 1 faults".
func Size[D Design, S, X any](w World[D, S, X], s S) string {
	w = w.Complete()
	m, f := w.Messages(s), w.Frame(&s)
	return fmt.Sprintf("%d %ss, %d deliveries, %d faults", m.N, m.Noun, len(f.Deliveries), len(f.Faults))
}
