// Package postgres backs ref.PendingStore and ref.Sink with PostgreSQL, so
// that several settler nodes share one durable unique constraint.
//
// A claim is a row keyed by the request's full 128-bit ref.Key (bytea
// PRIMARY KEY: a 64-bit fingerprint collision is two rows, never a lost
// settlement). Begin is INSERT ... ON CONFLICT DO NOTHING, so the claim is
// atomic across every node; Commit is an UPDATE guarded by state < new, so
// states only move forward; Pending reads a partial index of the Granted rows
// by lease.
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
// The Sink writes the grant key, runs the effect and marks the claim
// Delivered in one transaction: the credit and its record survive a crash
// together or not at all.
//
// With Options.Batch, concurrent Begin and Commit calls on one Store are
// coalesced into multi-row statements (see internal/coalesce); under load
// that is several times the throughput of one statement per call.
package postgres
