// Package ref is onceproof's reference Settler: exactly-once settlement of
// credits and debits over a transport that only promises at-least-once.
//
// It stacks three layers, after the source document 000 ("至少一次投递下的正确性"):
//
//  1. Window: an exact in-memory idempotency window (bounded by rate x ttl)
//     that answers the common retry without touching the database.
//  2. Store: a durable unique constraint on the request's 128-bit Key (a SQL
//     UNIQUE index, a Redis script): it catches what the window has
//     forgotten.
//  3. A state machine New -> Granted -> Delivered, with an idempotent Sink,
//     so a replay is a no-op and a grant cut in half by a crash is completed,
//     never repeated.
//
// Where this package departs from the source document, and why (each has a
// test that fails on the document's behaviour, and impls/seedverbatim keeps
// the document's exact behaviour for the proof matrix):
//
//   - The window is marked only after the effect is durable, never before the
//     claim: a failed claim must not make every retry inside the ttl look
//     like a duplicate (a lost settlement), and a window hit must be an
//     honest "already delivered".
//   - StateGranted records are completed: by the next retry that finds them,
//     or by Recover, through the Sink keyed by the grant, never by running
//     the grant again.
//   - Stores return errors, and the Store contract says what each means and
//     what the Settler does next (store.go).
//   - Keys are 128 bits with unambiguous field boundaries, pinned by golden
//     vectors (fingerprint.go).
//
// # The caller's duties
//
//  1. Derive the request's Key from its business identity with KeyOf (for a
//     game settlement: player, match id, kind), identically on every node
//     and every version.
//  2. Build one Settler per process: NewSettler(NewWindow(ttl, shards),
//     store, WithSink(sink)). ttl covers the retries you expect (the store
//     catches the rest); shards ~ 4x cores.
//  3. Call Apply(ctx, key, payload, now) for every arrival, with now from
//     your clock. On err == nil ack the sender (Result says whether this call
//     was the first); on err != nil do not ack: the sender retries.
//  4. Call Recover(ctx, now) when the process starts and periodically, on any
//     node: it completes grants whose owner died (lease ended).
//  5. Make the Sink idempotent by key, ideally in the same transaction as the
//     balance it changes (ref/sqlite, ref/postgres do).
package ref
