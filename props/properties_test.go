package props

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// hb builds a history by hand, one event per call, each 100ms after the last.
type hb struct{ h faults.History }

func newHB(ss ...faults.Settlement) *hb {
	for i := range ss {
		ss[i].ID = i
	}
	return &hb{h: faults.History{Design: "hand", Schedule: faults.Schedule{Frame: engine.Frame{Family: faults.Families.Clean, Nodes: 2}, Settlements: ss}}}
}

func (b *hb) add(e faults.Event) *hb {
	e.Seq = len(b.h.Events)
	e.At = time.Duration(e.Seq) * 100 * time.Millisecond
	b.h.Events = append(b.h.Events, e)
	return b
}

// arrive records an arrival; a first arrival is planned delivery number s,
// a later one a retry the sender added (Delivery -1).
func (b *hb) arrive(att, node, s int, first bool) *hb {
	d := -1
	if first {
		d = s
	}
	return b.add(faults.Event{Kind: engine.EvArrive, Attempt: att, Node: node, Msg: s, First: first, Delivery: d})
}

// credit records a credit of settlement s's net amount.
func (b *hb) credit(att, node, s int, room uint32, grant string, applied bool) *hb {
	var net int64
	if s >= 0 {
		net = b.h.Schedule.Settlements[s].Net
	}
	return b.add(faults.Event{Detail: faults.Detail{Room: room, Amount: net, Grant: grant, Applied: applied}, Kind: faults.EvCredit, Attempt: att, Node: node, Msg: s})
}

func (b *hb) ack(att, node, s int, a faults.Ack) *hb {
	return b.add(faults.Event{Kind: engine.EvAck, Attempt: att, Node: node, Msg: s, Ack: a})
}

func (b *hb) state(node, size, bound int) *hb {
	return b.add(faults.Event{Detail: faults.Detail{Size: size, Bound: bound}, Kind: faults.EvState, Attempt: -1, Node: node, Msg: -1})
}

func (b *hb) exhausted() *hb {
	b.add(faults.Event{Kind: engine.EvBudget, Attempt: -1, Msg: -1})
	b.h.Exhausted = true
	return b
}

var two = []faults.Settlement{
	{Player: 1, Room: 7, Match: 1, Round: 1, Kind: faults.KindInstant, Net: 5},
	{Player: 1, Room: 8, Match: 2, Round: 1, Kind: faults.KindFinal, Net: -3, Final: true},
}

// clean is a correct history: both settlements credited once, acked honestly,
// the retry of s0 answered "duplicate" by the other node.
func clean() *hb {
	return newHB(append([]faults.Settlement(nil), two...)...).
		arrive(0, 0, 0, true).credit(0, 0, 0, 7, "g0", true).ack(0, 0, 0, faults.AckCredited).
		arrive(1, 1, 0, false).credit(1, 1, 0, 7, "g0", false).ack(1, 1, 0, faults.AckDuplicate).
		arrive(2, 0, 1, true).credit(2, 0, 1, 8, "g1", true).ack(2, 0, 1, faults.AckCredited).
		state(0, 2, 4)
}

func TestEveryPropertyHoldsOnACleanHistory(t *testing.T) {
	r := Judge(clean().h)
	for _, v := range r {
		if v.Outcome != Holds {
			t.Errorf("%v, want holds", v)
		}
	}
	if len(r) != len(faults.World.Properties) {
		t.Errorf("Judge gave %d verdicts, want one per property (%d)", len(r), len(faults.World.Properties))
	}
}

func TestNoDupFailsOnASecondAppliedCredit(t *testing.T) {
	b := clean().arrive(3, 1, 1, false).credit(3, 1, 1, 8, "", true).ack(3, 1, 1, faults.AckCredited)
	got := checkNoDup(b.h)
	want := Verdict{Property: faults.Properties.NoDup, Outcome: Fails, Anomalies: []engine.Anomaly{{
		Property: faults.Properties.NoDup, Msg: 1, Events: []int{7, 11}, Attempts: []int{2, 3}, Deliveries: []int{1}, Nodes: []int{0, 1},
		At:      1100 * time.Millisecond,
		Explain: "s1 (player 1, room 8, round 1, match 2, final, net -3) was credited 2 times (attempt 2 on node 0 at 700ms, grant g1, attempt 3 on node 1 at 1.1s, unkeyed)",
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checkNoDup (-want +got):\n%s", diff)
	}
}

func TestNoDupIgnoresACreditTheLedgerDidNotApply(t *testing.T) {
	b := clean().credit(3, 1, 1, 8, "g1", false)
	if v := checkNoDup(b.h); v.Outcome != Holds {
		t.Errorf("a keyed no-op credit counted as a duplicate: %v", v)
	}
}

func TestNoLossFailsWhenAnArrivedSettlementIsNeverCredited(t *testing.T) {
	b := newHB(append([]faults.Settlement(nil), two...)...).
		arrive(0, 0, 0, true).credit(0, 0, 0, 7, "g0", true).ack(0, 0, 0, faults.AckCredited).
		arrive(1, 0, 1, true).ack(1, 0, 1, faults.Nack).
		arrive(2, 1, 1, false).ack(2, 1, 1, faults.AckDuplicate)
	v := checkNoLoss(b.h)
	if v.Outcome != Fails || len(v.Anomalies) != 1 {
		t.Fatalf("checkNoLoss = %v, want one anomaly", v)
	}
	a := v.Anomalies[0]
	if diff := cmp.Diff([]int{3, 4, 5, 6}, a.Events); a.Msg != 1 || diff != "" {
		t.Errorf("anomaly %v: want settlement 1 and its arrivals and acks (-want +got):\n%s", a, diff)
	}
	if want := `s1 (player 1, room 8, round 1, match 2, final, net -3) arrived 2 time(s) but was never credited; attempt 2 was acked "duplicate"`; a.Explain != want {
		t.Errorf("Explain = %q, want %q", a.Explain, want)
	}
}

func TestNoLossIgnoresASettlementThatNeverArrived(t *testing.T) {
	b := newHB(append([]faults.Settlement(nil), two...)...).
		arrive(0, 0, 0, true).credit(0, 0, 0, 7, "g0", true).ack(0, 0, 0, faults.AckCredited)
	if v := checkNoLoss(b.h); v.Outcome != Holds {
		t.Errorf("checkNoLoss = %v, want holds", v)
	}
}

func TestNoCrossRoomFailsOnACreditToAnotherRoom(t *testing.T) {
	b := clean().arrive(3, 0, 1, false).credit(3, 0, 1, 7, "g1-room7", true)
	v := checkNoCrossRoom(b.h)
	if v.Outcome != Fails || len(v.Anomalies) != 1 || v.Anomalies[0].Events[0] != 11 {
		t.Fatalf("checkNoCrossRoom = %v, want one anomaly at event 11", v)
	}
	if want := "s1 (player 1, room 8, round 1, match 2, final, net -3) was credited to room 7"; v.Anomalies[0].Explain != want {
		t.Errorf("Explain = %q, want %q", v.Anomalies[0].Explain, want)
	}
}

func TestNoBlockingFailsWhenAFirstArrivalIsHeld(t *testing.T) {
	b := newHB(append([]faults.Settlement(nil), two...)...).
		arrive(0, 0, 1, true).ack(0, 0, 1, faults.AckHeld).
		arrive(1, 0, 0, true).credit(1, 0, 0, 7, "g0", true).ack(1, 0, 0, faults.AckCredited)
	v := checkNoBlocking(b.h)
	if v.Outcome != Fails || len(v.Anomalies) != 1 {
		t.Fatalf("checkNoBlocking = %v, want one anomaly", v)
	}
	if diff := cmp.Diff([]int{0, 1}, v.Anomalies[0].Events); diff != "" {
		t.Errorf("anomaly events (-want +got):\n%s", diff)
	}
}

func TestNoBlockingAllowsHoldingARetry(t *testing.T) {
	b := clean().arrive(3, 0, 1, false).ack(3, 0, 1, faults.AckHeld)
	if v := checkNoBlocking(b.h); v.Outcome != Holds {
		t.Errorf("checkNoBlocking = %v, want holds (only first arrivals must not be held)", v)
	}
}

func TestBoundedStateFailsOverTheDeclaredBound(t *testing.T) {
	b := clean().state(1, 5, 4)
	v := checkBoundedState(b.h)
	if v.Outcome != Fails || len(v.Anomalies) != 1 || v.Anomalies[0].Explain != "node 1 keeps 5 entries, over its declared bound of 4" {
		t.Fatalf("checkBoundedState = %v", v)
	}
}

func TestHonestAckFailsOnDuplicateBeforeAnyCredit(t *testing.T) {
	b := newHB(append([]faults.Settlement(nil), two...)...).
		arrive(0, 0, 0, true).ack(0, 0, 0, faults.AckDuplicate).
		arrive(1, 0, 0, false).credit(1, 0, 0, 7, "g0", true).ack(1, 0, 0, faults.AckCredited)
	v := checkHonestAck(b.h)
	if v.Outcome != Fails || len(v.Anomalies) != 1 || v.Anomalies[0].Events[0] != 1 {
		t.Fatalf("checkHonestAck = %v, want one anomaly at event 1", v)
	}
}

func TestHonestAckFailsOnCreditedAckWhenTheCreditWasNotApplied(t *testing.T) {
	b := newHB(append([]faults.Settlement(nil), two...)...).
		arrive(0, 0, 0, true).credit(0, 0, 0, 7, "g0", false).ack(0, 0, 0, faults.AckCredited)
	if v := checkHonestAck(b.h); v.Outcome != Fails {
		t.Errorf("checkHonestAck = %v, want fails", v)
	}
}

func TestExhaustedBudgetIsUnknownNotAPass(t *testing.T) {
	r := Judge(clean().exhausted().h)
	for _, v := range r {
		if v.Outcome != Unknown {
			t.Errorf("%v, want unknown on an exhausted history", v)
		}
	}
}

func TestExhaustedBudgetStillFailsAViolatedSafetyProperty(t *testing.T) {
	b := clean().arrive(3, 1, 1, false).credit(3, 1, 1, 8, "", true).exhausted()
	r := Judge(b.h)
	if got := r.Outcome(faults.Properties.NoDup); got != Fails {
		t.Errorf("NoDup on an exhausted history with a double credit = %v, want fails (a violated prefix is a violation)", got)
	}
	if got := r.Outcome(faults.Properties.NoLoss); got != Unknown {
		t.Errorf("NoLoss on an exhausted history = %v, want unknown", got)
	}
	if diff := cmp.Diff([]faults.Property{faults.Properties.NoDup}, r.Failed()); diff != "" {
		t.Errorf("Failed (-want +got):\n%s", diff)
	}
}
