package loot

import "fmt"

// Status is where a session is in its life. Stores keep it as the text of
// the constant (a VARCHAR column), so a row reads the same in SQL and Go.
type Status string

const (
	// StatusOpen: the session exists and claims are not accepted yet.
	StatusOpen Status = "OPEN"
	// StatusClaiming: members may claim until the deadline (store clock).
	StatusClaiming Status = "CLAIMING"
	// StatusSettling: one settler won the CAS; the claim set is frozen.
	StatusSettling Status = "SETTLING"
	// StatusClosed: the winners and their PENDING grants are recorded,
	// with the audit snapshot, in one write. Terminal; delivery of the
	// grants completes afterwards (Settle, then Recover).
	StatusClosed Status = "CLOSED"
	// StatusCanceled: voided before any grant existed. Terminal; the
	// session never delivers anything.
	StatusCanceled Status = "CANCELED"
)

// Op is a Store operation that changes a session's status.
type Op uint8

const (
	OpStartClaiming Op = iota + 1 // Store.StartClaiming
	OpBeginSettle                 // Store.BeginSettle
	OpRecordGrants                // Store.RecordGrants
	OpCancel                      // Store.Cancel
)

func (op Op) String() string {
	switch op {
	case OpStartClaiming:
		return "StartClaiming"
	case OpBeginSettle:
		return "BeginSettle"
	case OpRecordGrants:
		return "RecordGrants"
	case OpCancel:
		return "Cancel"
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// transitions is the session state machine, the only one: every status
// change any Store makes is a row here, and each is a conditional write
// (UPDATE ... WHERE status IN from ...), never a read then a write. The
// other conditions of each write (deadline, settle lease, fence) are in
// guard.go. It is the source document's table (OPEN->CLAIMING,
// CLAIMING->SETTLING, SETTLING->CLOSED, OPEN|CLAIMING|SETTLING->CANCELED)
// plus SETTLING->SETTLING: a takeover of a settler whose lease ended, which
// bumps the fence so the old settler can write nothing more. Nothing leaves
// CLOSED or CANCELED, and nothing goes back to CLAIMING. Changing a row
// changes what every store must do: the conformance suite reads this table.
var transitions = [...]struct {
	op   Op
	from []Status
	to   Status
}{
	{OpStartClaiming, []Status{StatusOpen}, StatusClaiming},
	{OpBeginSettle, []Status{StatusClaiming, StatusSettling}, StatusSettling},
	{OpRecordGrants, []Status{StatusSettling}, StatusClosed},
	{OpCancel, []Status{StatusOpen, StatusClaiming, StatusSettling}, StatusCanceled},
}

// Statuses lists every status in lifecycle order.
func Statuses() []Status {
	return []Status{StatusOpen, StatusClaiming, StatusSettling, StatusClosed, StatusCanceled}
}

// Ops lists every status-changing operation.
func Ops() []Op { return []Op{OpStartClaiming, OpBeginSettle, OpRecordGrants, OpCancel} }

// Transition returns the statuses op may start from and the status it
// leaves. It panics on an unknown op (a programming error).
func Transition(op Op) (from []Status, to Status) {
	for _, tr := range transitions {
		if tr.op == op {
			return append([]Status(nil), tr.from...), tr.to
		}
	}
	panic(fmt.Sprintf("loot.Transition: unknown op %v", op))
}

// CanTransition reports whether op may move a session in status from (its
// other conditions aside).
func CanTransition(op Op, from Status) bool {
	fs, _ := Transition(op)
	for _, f := range fs {
		if f == from {
			return true
		}
	}
	return false
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusOpen, StatusClaiming, StatusSettling, StatusClosed, StatusCanceled:
		return true
	}
	return false
}
