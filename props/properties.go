package props

import (
	"fmt"
	"slices"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// checker judges one property on a history.
type checker func(h faults.History) Verdict

// checkers maps every property to its checker. The safety properties (all but
// NoLoss) are judged on whatever prefix a budget-exhausted run produced: a
// violation in a prefix is a violation of the whole run, so it fails; a clean
// prefix proves nothing, so it is Unknown. NoLoss speaks about the drained
// end state, so an exhausted run is always Unknown for it.
var checkers = map[faults.Property]checker{
	faults.Properties.NoDup:        checkNoDup,
	faults.Properties.NoLoss:       checkNoLoss,
	faults.Properties.NoCrossRoom:  checkNoCrossRoom,
	faults.Properties.NoBlocking:   checkNoBlocking,
	faults.Properties.BoundedState: checkBoundedState,
	faults.Properties.HonestAck:    checkHonestAck,
	faults.Properties.ExactAmount:  checkExactAmount,
	faults.Properties.Responsive:   checkResponsive,
}

// CheckProperty judges property p on h. An unknown property panics: the names are
// constants of package faults, so that is a programming error.
func CheckProperty(p faults.Property, h faults.History) Verdict {
	c, ok := checkers[p]
	if !ok {
		panic(fmt.Sprintf("props.CheckProperty: unknown property %q", p))
	}
	return c(h)
}

// Judge judges every property of faults.World.Properties on h.
func Judge(h faults.History) Report {
	r := make(Report, len(faults.World.Properties))
	for i, p := range faults.World.Properties {
		r[i] = CheckProperty(p, h)
	}
	return r
}

// safety turns the anomalies of a prefix-closed property into a verdict.
func safety(p faults.Property, h faults.History, as []engine.Anomaly) Verdict {
	return engine.Safety(p, h.Stalled, h.Exhausted, as)
}

// checkNoDup: no settlement has more than one applied credit in the ledger
// (never 多记). A keyed credit whose grant is already in the ledger is not
// applied, so only unkeyed credits or credits under different grants can
// double a settlement.
func checkNoDup(h faults.History) Verdict {
	// Count first, then gather the events of only the settlements credited
	// twice: a long history's credits are never copied.
	applied := func(e *faults.Event) bool { return e.Kind == faults.EvCredit && e.Detail.Applied && e.Msg >= 0 }
	n := make([]int, msgSpan(h))
	twice := false
	for i := range h.Events {
		if e := &h.Events[i]; applied(e) {
			n[e.Msg]++
			twice = twice || n[e.Msg] == 2
		}
	}
	if !twice {
		return safety(faults.Properties.NoDup, h, nil)
	}
	evs := map[int][]faults.Event{}
	var order []int // in the order of their first applied credit
	for i := range h.Events {
		e := &h.Events[i]
		if !applied(e) || n[e.Msg] < 2 {
			continue
		}
		if len(evs[e.Msg]) == 0 {
			order = append(order, e.Msg)
		}
		evs[e.Msg] = append(evs[e.Msg], *e)
	}
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	for _, id := range order {
		a := an.New(faults.Properties.NoDup, id, evs[id])
		a.Explain = fmt.Sprintf("%s was credited %d times (%s)", describe(h, id), len(evs[id]), grantList(evs[id]))
		as = append(as, a)
	}
	return safety(faults.Properties.NoDup, h, as)
}

// checkNoLoss: every settlement that arrived at least once has an applied
// credit once the schedule drained (never 少记, "never lose a credit"): all
// retries and recovery are done by then, so a missing credit is lost for
// good (a late settlement dropped as a replay is lost). And the sender got
// an ack for it: one it gave up on counts as failed on its side, credited
// or not.
//
// Custody: a sender that gives up by design (Schedule.GiveUp: one send,
// no resend) leaves only Recover to finish what an attempt left undone,
// and Recover can finish only what some call recorded. Env's contract says
// which calls those can be: one failed with ErrInjected did nothing, one
// that ran did its fn (ErrTimeout included), and a Credit that ran is in
// the ledger. The runner cannot see inside fn, so every Durable call that
// ran could have written, except one the design named a read
// (faults.Read): a read records nothing. So a settlement is the design's
// to lose from its first call that ran and is not a read
// (faults.History.Reached); one the sender gave up on before that, it
// lost itself (the sender gave up, and nothing took effect), and no design
// could have credited it.
func checkNoLoss(h faults.History) Verdict {
	if h.Stalled {
		return Verdict{Property: faults.Properties.NoLoss, Outcome: Unknown, Reason: "the design blocked (see Responsive) before the schedule drained"}
	}
	if h.Exhausted {
		return Verdict{Property: faults.Properties.NoLoss, Outcome: Unknown, Reason: "the budget ran out before the schedule drained: retries may still have credited it"}
	}
	// One pass marks what arrived, was credited and given up on; a second
	// gathers the events of only the settlements it reports: a long
	// history's events are never copied.
	span := msgSpan(h)
	arrived, credited, gaveUp := make([]bool, span), make([]bool, span), make([]bool, span)
	var order []int // in the order of their first arrival
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Msg < 0:
		case e.Kind == engine.EvArrive:
			if !arrived[e.Msg] {
				arrived[e.Msg] = true
				order = append(order, e.Msg)
			}
		case e.Kind == faults.EvCredit && e.Detail.Applied:
			credited[e.Msg] = true
		case e.Kind == engine.EvGiveUp:
			gaveUp[e.Msg] = true
		}
	}
	var reached []bool
	if h.Schedule.GiveUp {
		reached = h.ReachedEach()
	}
	// lost: arrived and never credited, in the design's custody (see
	// above); unacked: credited, and the sender gave up on it.
	lost, unacked := make([]bool, span), make([]bool, span)
	some := false
	for _, id := range order {
		lost[id] = !credited[id] && (!h.Schedule.GiveUp || id < len(reached) && reached[id])
		some = some || lost[id]
	}
	for id := range span {
		unacked[id] = credited[id] && gaveUp[id] && !h.Schedule.GiveUp
		some = some || unacked[id]
	}
	if !some {
		return Verdict{Property: faults.Properties.NoLoss, Outcome: Holds}
	}
	arrivals := map[int][]faults.Event{}
	acks := map[int]map[int]faults.Event{} // settlement -> attempt -> its answer
	giveUps := map[int][]faults.Event{}
	var unackedGiveUps []faults.Event
	for i := range h.Events {
		e := &h.Events[i]
		if e.Msg < 0 || !lost[e.Msg] && !unacked[e.Msg] {
			continue
		}
		switch e.Kind {
		case engine.EvArrive:
			arrivals[e.Msg] = append(arrivals[e.Msg], *e)
		case engine.EvAck:
			if acks[e.Msg] == nil {
				acks[e.Msg] = map[int]faults.Event{}
			}
			acks[e.Msg][e.Attempt] = *e
		case engine.EvGiveUp:
			giveUps[e.Msg] = append(giveUps[e.Msg], *e)
			if unacked[e.Msg] {
				unackedGiveUps = append(unackedGiveUps, *e)
			}
		}
	}
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	for _, id := range order {
		if !lost[id] {
			continue
		}
		evs := arrivals[id]
		// The acks of these attempts say how the design let it go.
		all := append([]faults.Event(nil), evs...)
		how := ""
		for _, ev := range evs {
			if ack, ok := acks[id][ev.Attempt]; ok {
				all = append(all, ack)
				if ack.Ack.Acked() {
					how = fmt.Sprintf("; attempt %d was acked %q", ack.Attempt, faults.World.AckName(ack.Ack))
				}
			}
		}
		for _, e := range giveUps[id] {
			all = append(all, e)
			how += "; " + e.Err
		}
		if h.Schedule.GiveUp {
			// Custody is the only reason a given-up settlement counts: say
			// what started it, and how a design whose first call only
			// read says so (a false failure otherwise: faults.Read).
			how += "; in the design's custody since a call of it that could have taken effect ran (a Durable op not named faults.Read, or a Credit)"
		}
		sortEvents(all)
		a := an.New(faults.Properties.NoLoss, id, all)
		a.Explain = fmt.Sprintf("%s arrived %d time(s) but was never credited%s", describe(h, id), len(evs), how)
		as = append(as, a)
	}
	// Credited but never acked: the sender gave up on it, so the business
	// counts it as failed (an alert, a manual repair) although the money
	// moved: lost from the sender's side. (A sender that gives up by
	// design, Schedule.GiveUp, leaves the ack to nobody: Recover's credit
	// is all it can get.)
	for _, e := range unackedGiveUps {
		a := an.New(faults.Properties.NoLoss, e.Msg, append(slices.Clip(arrivals[e.Msg]), e))
		a.Explain = fmt.Sprintf("%s was credited but never acked: %s, and counts it as failed", describe(h, e.Msg), e.Err)
		as = append(as, a)
	}
	if len(as) > 0 {
		return Verdict{Property: faults.Properties.NoLoss, Outcome: Fails, Anomalies: as}
	}
	return Verdict{Property: faults.Properties.NoLoss, Outcome: Holds}
}

// checkNoCrossRoom: every applied credit lands in its settlement's own room
// (不串房).
func checkNoCrossRoom(h faults.History) Verdict {
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind != faults.EvCredit || !e.Detail.Applied || e.Msg < 0 || e.Msg >= len(h.Schedule.Settlements) {
			continue
		}
		want := h.Schedule.Settlements[e.Msg].Room
		if e.Detail.Room == want {
			continue
		}
		a := an.New(faults.Properties.NoCrossRoom, e.Msg, []faults.Event{*e})
		a.Explain = fmt.Sprintf("%s was credited to room %d", describe(h, e.Msg), e.Detail.Room)
		as = append(as, a)
	}
	return safety(faults.Properties.NoCrossRoom, h, as)
}

// checkNoBlocking: the first arrival of a settlement is never answered
// AckHeld (不阻塞新房): holding it back waits for a gap that may never fill.
func checkNoBlocking(h faults.History) Verdict {
	// Only an AckHeld can fail it: a history without one (every design
	// that never holds) is judged without indexing its arrivals.
	held := false
	for i := range h.Events {
		if e := &h.Events[i]; e.Kind == engine.EvAck && e.Ack == faults.AckHeld {
			held = true
			break
		}
	}
	if !held {
		return safety(faults.Properties.NoBlocking, h, nil)
	}
	first := map[int]int{} // attempt -> the position of its first arrival
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	for i := range h.Events {
		e := &h.Events[i]
		switch e.Kind {
		case engine.EvArrive:
			if e.First {
				first[e.Attempt] = i
			}
		case engine.EvAck:
			arr, ok := first[e.Attempt]
			if !ok || e.Ack != faults.AckHeld {
				continue
			}
			a := an.New(faults.Properties.NoBlocking, e.Msg, []faults.Event{h.Events[arr], *e})
			a.Explain = fmt.Sprintf("the first arrival of %s was held back instead of credited", describe(h, e.Msg))
			as = append(as, a)
		}
	}
	return safety(faults.Properties.NoBlocking, h, as)
}

// checkBoundedState: no sample of a Bounded node's memory exceeds the bound
// the node declares for the load it was given. A history without a sample
// (the design does not implement faults.Bounded, or nothing arrived) is
// NotJudged: nothing was shown either way.
func checkBoundedState(h faults.History) Verdict {
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	samples := 0
	for i := range h.Events {
		e := &h.Events[i]
		if e.Kind == faults.EvState {
			samples++
		}
		if e.Kind != faults.EvState || e.Detail.Size <= e.Detail.Bound {
			continue
		}
		a := an.New(faults.Properties.BoundedState, -1, []faults.Event{*e})
		a.Explain = fmt.Sprintf("node %d keeps %d entries, over its declared bound of %d", e.Node, e.Detail.Size, e.Detail.Bound)
		as = append(as, a)
	}
	if samples == 0 && len(as) == 0 && !h.Exhausted && !h.Stalled {
		return Verdict{Property: faults.Properties.BoundedState, Outcome: NotJudged, Reason: "no node reported its state: the design's Node does not implement faults.Bounded (StateSize, StateSpan, StateBound: the memory it keeps and its bound)"}
	}
	return safety(faults.Properties.BoundedState, h, as)
}

// checkExactAmount: every applied credit moves its settlement's net amount
// (a debit stays a debit, and no sign or amount is made up) for a
// settlement of the schedule. With NoDup (no second credit), NoLoss (none
// missing) and NoCrossRoom (each in its own room) it makes every player's
// balance in every room exactly the sum of the settlements that arrived
// there; each of the four names its own way of breaking that sum.
func checkExactAmount(h faults.History) Verdict {
	sts := h.Schedule.Settlements
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind != faults.EvCredit || !e.Detail.Applied:
		case e.Msg < 0:
			a := an.New(faults.Properties.ExactAmount, -1, []faults.Event{*e})
			a.Explain = fmt.Sprintf("a credit of %d to room %d for a settlement that does not exist (%s)", e.Detail.Amount, e.Detail.Room, e.Err)
			as = append(as, a)
		case e.Detail.Amount != sts[e.Msg].Net:
			a := an.New(faults.Properties.ExactAmount, e.Msg, []faults.Event{*e})
			a.Explain = fmt.Sprintf("%s was credited %d, not its net %d", describe(h, e.Msg), e.Detail.Amount, sts[e.Msg].Net)
			as = append(as, a)
		}
	}
	return safety(faults.Properties.ExactAmount, h, as)
}

// checkHonestAck: an ack that claims the credit is durable (AckCredited or
// AckDuplicate) for settlement X comes only after X has an applied credit in
// the ledger. A dishonest "already delivered" makes the sender stop retrying
// a settlement that may never be credited.
func checkHonestAck(h faults.History) Verdict {
	credited := make([]bool, msgSpan(h))
	an := engine.AnomaliesOf(h.Events)
	var as []engine.Anomaly
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Kind == faults.EvCredit && e.Detail.Applied && e.Msg >= 0:
			credited[e.Msg] = true
		case e.Kind == engine.EvAck && (e.Ack == faults.AckCredited || e.Ack == faults.AckDuplicate) && e.Msg >= 0:
			if credited[e.Msg] {
				continue
			}
			a := an.New(faults.Properties.HonestAck, e.Msg, []faults.Event{*e})
			a.Explain = fmt.Sprintf("attempt %d of %s was acked %q before any credit of it was in the ledger", e.Attempt, describe(h, e.Msg), faults.World.AckName(e.Ack))
			as = append(as, a)
		}
	}
	return safety(faults.Properties.HonestAck, h, as)
}

// checkResponsive: every call into the design returns, and nothing of it
// outlives the run: Deliver and Recover never panic (a panic is a crash
// the design caused itself, and in production it takes the process down)
// and never block (a watchdog ended the run: EvStall, on the bubble's
// clock or the wall's), and no goroutine of the design is left running
// after the run (EvLeak: seen only inside TestDesign's bubbles). A panic
// anomaly carries the panic value and the design's frame; a stall names
// the attempts that never finished; a leak each goroutine's stack.
func checkResponsive(h faults.History) Verdict {
	return engine.CheckResponsive(h.Events, h.Exhausted, faults.Properties.Responsive, "s", func(id int) string { return describe(h, id) })
}

// msgSpan is how many settlement ids h's events may name: its
// settlements, or more in a history built by hand that names others. The
// checkers keep their per-settlement marks in slices of this length, not
// in maps of every settlement.
func msgSpan(h faults.History) int {
	n := len(h.Schedule.Settlements)
	for i := range h.Events {
		n = max(n, h.Events[i].Msg+1)
	}
	return n
}

func sortEvents(evs []faults.Event) { engine.SortEvents(evs) }

func grantList(evs []faults.Event) string {
	s := ""
	for i, e := range evs {
		if i > 0 {
			s += ", "
		}
		g := e.Detail.Grant
		if g == "" {
			g = "unkeyed"
		} else {
			g = "grant " + g
		}
		s += fmt.Sprintf("attempt %d on node %d at %v, %s", e.Attempt, e.Node, e.At, g)
	}
	return s
}

// describe names settlement id with the business fields a reader needs to see
// why two settlements collide.
func describe(h faults.History, id int) string {
	if id < 0 || id >= len(h.Schedule.Settlements) {
		return fmt.Sprintf("s%d", id)
	}
	s := h.Schedule.Settlements[id]
	return fmt.Sprintf("s%d (player %d, room %d, round %d, match %d, %v, net %d)", id, s.Player, s.Room, s.Round, s.Match, s.Kind, s.Net)
}
