// Package ref is onceproof's reference Settler: exactly-once settlement of
// credits and debits over a transport that only promises at-least-once.
//
// It stacks the three layers of "Correctness under at-least-once delivery"
// (source document 000, a chapter on MMO servers; the repository's
// DESIGN.md, section "Source documents", describes it):
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
// That document's Go code is "the seed". This package keeps the seed's API,
// so its tests compile unchanged: Settle is the seed form (the caller
// delivers), SeedStore is the seed's Store interface and FromSeedStore
// adapts one. Where the package departs from the seed, each with a test
// that fails on the seed's behaviour (DESIGN.md, "Reference Settler"): the
// window is marked only after the effect is durable, Granted records are
// completed (by the next retry or Recover, through the Sink), stores return
// errors with a stated contract (Store), and keys are 128 bits with
// unambiguous field boundaries (KeyOf).
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
