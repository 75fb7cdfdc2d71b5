package engine

import "time"

// TimelineEvent is one event of a history as the renderings show it: the
// data behind a Timeline line, for a renderer that draws instead of
// printing (the command's HTML timeline).
type TimelineEvent struct {
	Seq     int
	At      time.Duration
	Node    int
	Attempt int // -1 when the event has none
	Kind    EventKind
	// Name is the kind's name ("arrive", "crash", the world's "credit");
	// Text is what the Timeline line prints after it.
	Name string
	Text string
	// Anomalies are the anomalies this event completes (the last event
	// each names), as Timeline prints them under it; Involved, the
	// properties whose anomalies name it at all.
	Anomalies []Anomaly
	Involved  []Property
}

// TimelineEvents is h's events with the texts Timeline prints for them and
// the anomalies of r filed as Timeline files them, so a drawing and the
// text timeline of one counterexample never disagree.
func TimelineEvents[D Design, S, X any](w World[D, S, X], h History[S, X], r Report) []TimelineEvent {
	w = w.Complete()
	notes := anomaliesByEvent(r)
	involved := map[int][]Property{}
	for _, v := range r {
		for _, a := range v.Anomalies {
			for _, s := range a.Events {
				if ps := involved[s]; len(ps) == 0 || ps[len(ps)-1] != a.Property {
					involved[s] = append(ps, a.Property)
				}
			}
		}
	}
	out := make([]TimelineEvent, 0, len(h.Events))
	for _, e := range h.Events {
		out = append(out, TimelineEvent{
			Seq: e.Seq, At: e.At, Node: e.Node, Attempt: e.Attempt, Kind: e.Kind,
			Name: kindName(w, e.Kind), Text: eventText(w, h, e),
			Anomalies: notes[e.Seq], Involved: involved[e.Seq],
		})
	}
	return out
}
