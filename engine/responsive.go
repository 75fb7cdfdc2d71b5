package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// CheckResponsive is the engine's own property, named p in a world's
// list: every call into the design returns. Deliver and Recover never
// panic (a panic is a crash the design caused itself, and in production it
// takes the process down) and never block (the watchdog ended the run:
// EvStall). A panic anomaly carries the panic value and the design's frame;
// a stall names the attempts that never finished. describe names message
// msg for a reader; letter is the world's message letter.
func CheckResponsive[X any](events []Event[X], exhausted bool, p Property, letter string, describe func(msg int) string) Verdict {
	var as []Anomaly
	// open: attempt -> the position of its arrival, until it ends. Only
	// attempts in flight are kept, so a long history costs no more than a
	// short one.
	open := map[int]int{}
	anomalies := AnomaliesOf(events)
	anomaly := func(msg int, evs []Event[X]) Anomaly { return anomalies.New(p, msg, evs) }
	for i, e := range events {
		switch e.Kind {
		case EvArrive:
			open[e.Attempt] = i
		case EvAck, EvCrash:
			delete(open, e.Attempt)
		case EvPanic:
			delete(open, e.Attempt)
			a := anomaly(e.Msg, []Event[X]{e})
			if e.Op == OpRecover {
				a.Explain = fmt.Sprintf("Recover on node %d panicked: %s", e.Node, e.Err)
			} else {
				a.Explain = fmt.Sprintf("attempt %d of %s on node %d panicked: %s", e.Attempt, describe(e.Msg), e.Node, e.Err)
			}
			as = append(as, a)
		case EvStall:
			// The attempts still open, in the order they arrived.
			arrived := slices.Sorted(maps.Values(open))
			evs := []Event[X]{}
			var names []string
			for _, j := range arrived {
				arr := events[j]
				evs = append(evs, arr)
				names = append(names, fmt.Sprintf("attempt %d of %s%d on node %d", arr.Attempt, letter, arr.Msg, arr.Node))
			}
			evs = append(evs, e)
			a := anomaly(-1, evs)
			what := "no attempt was in progress (Recover?)"
			if len(names) > 0 {
				what = strings.Join(names, ", ") + " never returned"
			}
			a.Explain = fmt.Sprintf("the run stalled: %s; %s", what, e.Err)
			as = append(as, a)
		case EvLeak:
			a := anomaly(-1, []Event[X]{e})
			a.Explain = e.Err
			as = append(as, a)
		}
	}
	if len(as) > 0 {
		return Verdict{Property: p, Outcome: Fails, Anomalies: as}
	}
	if exhausted {
		return Verdict{Property: p, Outcome: Unknown, Reason: "the budget ran out before the schedule drained and the prefix shows no panic"}
	}
	return Verdict{Property: p, Outcome: Holds}
}
