package mysql

// ErrDeadlock is errDeadlock for the external tests, which tell a deadlock
// victim of the document's SQL from any other failure.
const ErrDeadlock = errDeadlock

// Wrap is wrap for the external tests, which check how a server's real
// refusals are classified.
func Wrap(op string, err error) error { return wrap(op, err) }

// RoutineNames are the routines the store calls, for the external tests.
var RoutineNames = routineNames

// SessionColumns and MemberListJoin are the routines' read of a session,
// for benchmarks that write variants of them.
const (
	SessionColumns = sessionColumns
	MemberListJoin = memberListJoin
)
