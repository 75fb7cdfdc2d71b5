package engine

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Outcome is a property's verdict on one history, porcupine-style: a budget
// that ran out is its own outcome, never a pass.
type Outcome uint8

const (
	// Holds: the history satisfies the property.
	Holds Outcome = iota
	// Fails: the history violates the property; Verdict.Anomalies says where.
	Fails
	// Unknown: the run's budget ran out (History.Exhausted) before the
	// history could show the property holds.
	Unknown
	// NotJudged: the design gives the property nothing to judge (no state
	// reports for BoundedState: it does not implement faults.Bounded). It
	// is not a pass, and not a failure: reports name it.
	NotJudged
)

func (o Outcome) String() string {
	switch o {
	case Holds:
		return "holds"
	case Fails:
		return "fails"
	case Unknown:
		return "unknown"
	case NotJudged:
		return "not judged"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Anomaly is one violation of a property: the message, the events and
// deliveries involved, the place in the schedule, and one line of
// explanation a reviewer can read without the code.
type Anomaly struct {
	Property   Property
	Msg        int           // the message involved (a settlement, a request), -1 if none
	Events     []int         // Seq of the events involved, in history order
	Attempts   []int         // the attempts (Node.Deliver calls) involved; -1 for recovery
	Deliveries []int         // the planned deliveries (Schedule.Deliveries indices) behind those attempts
	Nodes      []int         // the nodes involved
	At         time.Duration // virtual time of the event that completes the violation
	Explain    string
}

func (a Anomaly) String() string {
	return fmt.Sprintf("%s at %v: %s (%s)", a.Property, a.At, a.Explain, a.where())
}

// where lists the events and the planned deliveries an anomaly involves.
func (a Anomaly) where() string {
	s := "events " + joinInts(a.Events)
	if len(a.Deliveries) > 0 {
		s += "; planned deliveries " + joinInts(a.Deliveries)
	}
	return s
}

// Verdict is one property's judgement of one history.
type Verdict struct {
	Property  Property
	Outcome   Outcome
	Anomalies []Anomaly // non-empty exactly when Outcome == Fails
	Reason    string    // why the outcome is Unknown
}

func (v Verdict) String() string {
	switch v.Outcome {
	case Fails:
		var b strings.Builder
		fmt.Fprintf(&b, "%s fails:", v.Property)
		for _, a := range v.Anomalies {
			b.WriteString("\n  ")
			b.WriteString(a.String())
		}
		return b.String()
	case Unknown, NotJudged:
		return fmt.Sprintf("%s %s: %s", v.Property, v.Outcome, v.Reason)
	}
	return fmt.Sprintf("%s %s", v.Property, v.Outcome)
}

// Report is every property's verdict on one history, in its world's
// Properties order.
type Report []Verdict

// Failed lists the properties that fail, in report order.
func (r Report) Failed() []Property {
	var out []Property
	for _, v := range r {
		if v.Outcome == Fails {
			out = append(out, v.Property)
		}
	}
	return out
}

// Outcome is p's outcome in r (Unknown if r does not judge p).
func (r Report) Outcome(p Property) Outcome {
	if v, ok := r.Verdict(p); ok {
		return v.Outcome
	}
	return Unknown
}

// Verdict is p's verdict in r.
func (r Report) Verdict(p Property) (Verdict, bool) {
	for _, v := range r {
		if v.Property == p {
			return v, true
		}
	}
	return Verdict{}, false
}

// Unknown reports whether any property's outcome is Unknown.
func (r Report) Unknown() bool {
	for _, v := range r {
		if v.Outcome == Unknown {
			return true
		}
	}
	return false
}

func (r Report) String() string {
	var b strings.Builder
	for i, v := range r {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(v.String())
	}
	return b.String()
}

// Safety turns the anomalies of a prefix-closed property into a verdict: a
// violation in a prefix is a violation of the whole run, so it fails; a
// clean prefix of a run that stalled or ran out of budget proves nothing,
// so it is Unknown.
func Safety(p Property, stalled, exhausted bool, as []Anomaly) Verdict {
	switch {
	case len(as) > 0:
		return Verdict{Property: p, Outcome: Fails, Anomalies: as}
	case stalled:
		return Verdict{Property: p, Outcome: Unknown, Reason: "the design blocked (see Responsive) before the schedule drained and the prefix shows no violation"}
	case exhausted:
		return Verdict{Property: p, Outcome: Unknown, Reason: "the budget ran out before the schedule drained and the prefix shows no violation"}
	}
	return Verdict{Property: p, Outcome: Holds}
}

// NewAnomaly is property p's anomaly about message msg (-1: none) made of
// evs, events of the history all: the attempts, nodes and planned
// deliveries they involve, and the time of the last one. The caller
// writes Explain. It reads the whole of all for the deliveries: a property
// that may report many anomalies of one history makes them with one
// Anomalies instead, which reads it once for all of them.
func NewAnomaly[X any](all []Event[X], p Property, msg int, evs []Event[X]) Anomaly {
	return AnomaliesOf(all).New(p, msg, evs)
}

// newAnomaly is NewAnomaly without the deliveries.
func newAnomaly[X any](p Property, msg int, evs []Event[X]) Anomaly {
	a := Anomaly{Property: p, Msg: msg}
	seenA, seenN := map[int]bool{}, map[int]bool{}
	for _, e := range evs {
		a.Events = append(a.Events, e.Seq)
		if !seenA[e.Attempt] {
			seenA[e.Attempt] = true
			a.Attempts = append(a.Attempts, e.Attempt)
		}
		if !seenN[e.Node] {
			seenN[e.Node] = true
			a.Nodes = append(a.Nodes, e.Node)
		}
		a.At = e.At
	}
	return a
}

// Anomalies makes the anomalies of one history as NewAnomaly does, but
// reads the history for the deliveries once, at the first anomaly, for all
// of them: a design that loses one settlement in ten of a
// 100,000-settlement history makes 10,000 anomalies, and NewAnomaly's scan
// of its 600,000 events for each is 6e9 event reads. A property that may
// report many anomalies of one history makes them here.
type Anomalies[X any] struct {
	all []Event[X]
	of  map[int][]arrival // attempt -> its arrivals of a planned delivery, in history order
}

// arrival is one EvArrive of a planned delivery: its position in the
// history and the delivery.
type arrival struct{ pos, delivery int }

// AnomaliesOf makes the anomalies of the history all.
func AnomaliesOf[X any](all []Event[X]) *Anomalies[X] { return &Anomalies[X]{all: all} }

// New is NewAnomaly(all, p, msg, evs).
func (x *Anomalies[X]) New(p Property, msg int, evs []Event[X]) Anomaly {
	if x.of == nil {
		x.of = map[int][]arrival{}
		for i := range x.all {
			if e := &x.all[i]; e.Kind == EvArrive && e.Delivery >= 0 && e.Attempt >= 0 {
				x.of[e.Attempt] = append(x.of[e.Attempt], arrival{i, e.Delivery})
			}
		}
	}
	a := newAnomaly(p, msg, evs)
	var found []arrival
	for _, at := range a.Attempts {
		found = append(found, x.of[at]...)
	}
	// In history order, as NewAnomaly's scan finds them.
	slices.SortFunc(found, func(u, v arrival) int { return u.pos - v.pos })
	for _, f := range found {
		a.Deliveries = append(a.Deliveries, f.delivery)
	}
	return a
}

// SortEvents sorts a few events by Seq.
func SortEvents[X any](evs []Event[X]) {
	slices.SortFunc(evs, func(a, b Event[X]) int { return a.Seq - b.Seq })
}

// JoinProps joins property names with ", ".
func JoinProps(ps []Property) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = string(p)
	}
	return strings.Join(s, ", ")
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}
