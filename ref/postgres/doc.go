// Package postgres backs ref.PendingStore and ref.Sink with PostgreSQL, so
// that several settler nodes share one durable unique constraint.
//
// The const Schema holds the SQL Open runs, creating what is missing: a
// claims table (Options.Table, default DefaultTable) keyed by the full
// 128-bit ref.Key (bytea PRIMARY KEY: a 64-bit fingerprint collision is two
// rows, never a lost settlement), a partial index of its Granted rows by
// lease, and the Sink's grant table, Table+"_grants". Begin is INSERT ... ON CONFLICT DO
// NOTHING, so the claim is atomic across every node; Commit is an UPDATE
// guarded by state < new, so states only move forward; Pending reads the
// partial index.
//
// Use:
//
//	st, err := postgres.Open(ctx, "postgres://user@host/db", postgres.Options{Batch: true})
//	sink := st.Sink(func(ctx context.Context, tx pgx.Tx, key ref.Key, payload []byte) error {
//		_, err := tx.Exec(ctx, "UPDATE wallet SET coins = coins + $2 WHERE player = $1", ...)
//		return err
//	})
//	settler := ref.NewSettler(ref.NewWindow(ttl, shards), st, ref.WithSink(sink))
//
// The Sink writes the grant key, runs the Effect and marks the claim
// Delivered in one transaction: the credit and its record survive a crash
// together or not at all.
//
// Options.Batch coalesces concurrent calls on one Store into multi-row
// statements, one round trip per batch: turn it on where many goroutines
// settle through one Store at once.
package postgres
