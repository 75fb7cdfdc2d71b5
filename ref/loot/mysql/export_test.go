package mysql

// ErrDeadlock is errDeadlock for the external tests, which tell a deadlock
// victim of the document's SQL from any other failure.
const ErrDeadlock = errDeadlock
