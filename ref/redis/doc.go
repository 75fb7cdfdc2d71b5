// Package redis backs ref.PendingStore and ref.Sink with Redis, so that
// several settler nodes share one durable claim per key.
//
// Each claim is one hash, prefix+"c:"+hex(key) with fields s (state), p
// (payload) and l (lease, Unix milliseconds), keyed by the full 128-bit
// ref.Key (a 64-bit fingerprint collision is two hashes, never a lost
// settlement). Granted claims are also members of one sorted set,
// prefix+"pending", scored by lease, which Pending reads. Every operation is
// one Lua script, so the existence check, the write and the sorted set move
// together atomically: the claim and its state are one step.
//
// Durability is Redis's: a claim survives a Redis crash only if the server
// runs with appendonly yes and appendfsync always (everysec can lose the last
// second of claims, and a lost claim can be granted again). Open checks both
// and refuses a weaker server with ErrNotDurable unless
// Options.AllowWeakDurability says to accept it. The client does
// not retry commands on its own (MaxRetries -1): a retried claim whose first
// attempt landed would report created=false to the node that created it.
//
// Use:
//
//	st, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", redis.Options{Prefix: "game:", Batch: true})
//	settler := ref.NewSettler(ref.NewWindow(ttl, shards), st, ref.WithSink(st.Sink()))
//
// With Options.Batch, concurrent calls on one Store are sent as one script
// call (see internal/coalesce and batchScript): one round trip, one command
// to parse and one entry into Lua for many claims.
//
// The scripts touch keys derived from their arguments (Pending reads the
// hashes the sorted set names), which standalone Redis and a single-shard
// deployment allow; Redis Cluster is not supported.
package redis
