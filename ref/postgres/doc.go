// Package postgres backs ref.PendingStore and ref.Sink with PostgreSQL, so
// that several settler nodes share one durable unique constraint on the
// full 128-bit ref.Key. The Sink writes the grant key, runs the caller's
// Effect and marks the claim Delivered in one transaction: the credit and
// its record survive a crash together or not at all. Store says what each
// call runs, Schema the tables, and Open how to use it.
package postgres
