// Package redis backs ref.PendingStore and ref.Sink with Redis, so that
// several settler nodes share one durable claim per key.
//
// The keys, each under Options.Prefix (default "onceproof:"), where hex is
// the 32 lowercase hex digits of ref.Key.Bytes (the full 128 bits: a 64-bit
// fingerprint collision is two claims, never a lost settlement):
//
//	prefix+"c:"+hex   hash, one claim: s state (1 Granted, 2 Delivered);
//	                  p payload and l lease (Unix ms) while Granted
//	prefix+"pending"  sorted set: hex of each Granted claim, scored by lease
//	prefix+"g:"+hex   string, the Sink's grant key: the payload applied
//	prefix+"ledger"   list, the Sink's ledger: hex+payload per grant, in order
//
// Every operation is one Lua script, so the existence check, the write and
// the pending set change together atomically. The scripts touch keys
// derived from their arguments, which standalone Redis and a single-shard
// deployment allow; Redis Cluster is not supported.
//
// Durability is Redis's: a claim survives a Redis crash only if the server
// runs with appendonly yes and appendfsync always (everysec can lose the last
// second of claims, and a lost claim can be granted again). Open checks both
// and refuses a weaker server with ErrNotDurable unless
// Options.AllowWeakDurability says to accept it. The client does not retry
// commands on its own (MaxRetries -1): a retried claim whose first attempt
// landed would report created=false to the node that created it.
//
// Use:
//
//	st, err := redis.Open(ctx, "redis://127.0.0.1:6379/0", redis.Options{Prefix: "game:", Batch: true})
//	settler := ref.NewSettler(ref.NewWindow(ttl, shards), st, ref.WithSink(st.Sink()))
//
// Options.Batch sends the concurrent calls on one Store as one script call:
// one round trip, one command to parse and one entry into Lua for many.
package redis
