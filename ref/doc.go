// Package ref is onceproof's reference Settler: exactly-once settlement of
// credits and debits over a transport that only promises at-least-once. It
// stacks the three layers of source document 000, "Correctness under
// at-least-once delivery" (DESIGN.md, "Source documents"): an exact
// in-memory Window, a durable unique constraint on the request's Key (a
// Store), and a state machine New -> Granted -> Delivered completed through
// an idempotent Sink. Settler lists the caller's duties; Store and Sink
// state what a backend must do. The seed's API (Settle, SeedStore) is kept;
// Settler says where the package departs from it.
package ref
