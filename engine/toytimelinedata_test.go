package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// TimelineEvents is the text timeline as data: event for event the same
// kind, text and anomalies Timeline prints, and each event involved in
// exactly the properties whose anomalies name it (a drawing built on it
// shows what the text shows).
func TestToyTimelineEventsAgreeWithTheTimeline(t *testing.T) {
	const repro = "go test -run '^TestToyTimelineEventsAgreeWithTheTimeline$' ./engine"
	c := engine.RunCell(toyWorld, toyDesign(forgetful{}), famLong, engine.MatrixOptions[toyDesign]{N: toyN})
	if len(c.Counterexamples) == 0 {
		t.Fatalf("forgetful under long: no counterexample (%s)", repro)
	}
	cx := c.Counterexamples[0]
	evs := engine.TimelineEvents(toyWorld, cx.History, cx.Report)
	text := engine.Timeline(toyWorld, cx.History, cx.Report)
	_, body, _ := strings.Cut(text, "events:\n")
	body, _, _ = strings.Cut(body, "verdicts:\n")
	lines := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if len(evs) != len(cx.History.Events) {
		t.Fatalf("%d timeline events for %d history events (%s)", len(evs), len(cx.History.Events), repro)
	}
	i, anomalies := 0, 0
	for _, e := range evs {
		if i >= len(lines) {
			t.Fatalf("the timeline ends before event %d:\n%s(%s)", e.Seq, text, repro)
		}
		line := lines[i]
		i++
		if !strings.HasPrefix(strings.TrimSpace(line), fmt.Sprint(e.Seq)+" ") || !strings.Contains(line, " "+e.Name+" ") || !strings.HasSuffix(line, " "+e.Text) {
			t.Errorf("event %d is %q %q, the timeline prints %q (%s)", e.Seq, e.Name, e.Text, line, repro)
		}
		for _, a := range e.Anomalies {
			anomalies++
			if want := fmt.Sprintf("        !! %s: %s", a.Property, a.Explain); i >= len(lines) || lines[i] != want {
				t.Errorf("after event %d the timeline prints %q, want %q (%s)", e.Seq, lines[min(i, len(lines)-1)], want, repro)
			}
			i++
		}
		var want []engine.Property
		for _, v := range cx.Report {
			for _, a := range v.Anomalies {
				if slices.Contains(a.Events, e.Seq) && !slices.Contains(want, a.Property) {
					want = append(want, a.Property)
				}
			}
		}
		if !slices.Equal(e.Involved, want) {
			t.Errorf("event %d is involved in %v, its anomalies name it for %v (%s)", e.Seq, e.Involved, want, repro)
		}
	}
	if anomalies == 0 {
		t.Errorf("no event completes an anomaly of a failing counterexample (%s)", repro)
	}
}
