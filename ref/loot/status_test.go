package loot

import (
	"slices"
	"testing"
)

// TestTransitionsAreTheDocumentsTablePlusTakeover pins the table: the
// source document's LootSessionStatus.ALLOWED set, plus the fenced
// SETTLING -> SETTLING takeover. Nothing leaves CLOSED or CANCELED and
// nothing returns to OPEN or CLAIMING after it was left.
func TestTransitionsAreTheDocumentsTablePlusTakeover(t *testing.T) {
	var got []string
	for _, op := range Ops() {
		from, to := Transition(op)
		for _, f := range from {
			got = append(got, string(f)+"->"+string(to))
		}
	}
	want := []string{
		"OPEN->CLAIMING", "CLAIMING->SETTLING", "SETTLING->CLOSED",
		"OPEN->CANCELED", "CLAIMING->CANCELED", "SETTLING->CANCELED",
		"SETTLING->SETTLING", // takeover: not in the document, see transitions
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("transitions = %v, want %v", got, want)
	}
	order := map[Status]int{StatusOpen: 0, StatusClaiming: 1, StatusSettling: 2, StatusClosed: 3, StatusCanceled: 3}
	for _, op := range Ops() {
		from, to := Transition(op)
		for _, f := range from {
			if f == StatusClosed || f == StatusCanceled {
				t.Errorf("%v leaves terminal %s", op, f)
			}
			if order[to] < order[f] {
				t.Errorf("%v moves %s back to %s", op, f, to)
			}
		}
	}
}

// TestGuardsAgreeWithTheTable: for every op and status, a guard lets the
// write through only where the table lists the status (the other
// conditions met).
func TestGuardsAgreeWithTheTable(t *testing.T) {
	for _, st := range Statuses() {
		s := Session{Spec: Spec{No: "S", Members: []PlayerID{1}}, Status: st, Fence: 3}
		late := s.Deadline.Add(1) // after the deadline and the (zero) lease
		apply := map[Op]bool{}
		apply[OpStartClaiming], _ = CheckStart(s)
		apply[OpBeginSettle] = CheckSettle(s, late) == nil
		apply[OpRecordGrants], _ = CheckRecord(s, 3)
		apply[OpCancel], _ = CheckCancel(s)
		for _, op := range Ops() {
			if apply[op] != CanTransition(op, st) {
				t.Errorf("guard of %v on %s lets it through = %v, table says %v", op, st, apply[op], CanTransition(op, st))
			}
		}
	}
}
