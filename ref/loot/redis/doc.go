// Package redis is loot.Lock on Redis with go-redis: the source document's
// settle lock, released safely.
//
// Keys: Options.Prefix + key, where key is what the caller passes (the
// Service passes loot.LockKey(no), "loot:settle:lock:" + the session
// number: the document's own layout when Prefix is empty). The value is
// the holder's token.
//
//   - Acquire is SET key token NX PX ttl (the ttl rounded up to the
//     millisecond): one command, judged by Redis's clock, never extending
//     a live key.
//   - Release is one Lua script, if GET key == token then DEL key, run by
//     EVALSHA with an EVAL fallback when the server lost its script cache
//     (a restart, SCRIPT FLUSH): the document's GET then DEL from the
//     client can delete the next holder's lock.
//
// Each call touches one key, so standalone Redis, a replica set and Redis
// Cluster all work. Options.Batch sends concurrent calls as one script
// (batch.go): many keys in one call, so a standalone server only.
//
// Persistence: none is required. The lock is an optimisation: it spares
// the database the CAS attempts of settlers that would lose anyway, and
// correctness rests on the store's CAS and fence (loot.Lock). A Redis that
// loses the key (a restart without AOF, an asynchronous failover, an
// expiry under a paused settler) lets a second settler past the lock, and
// the CAS refuses it. So Open does not ask for appendfsync always, unlike
// ref/redis, whose keys are the durable claims themselves.
//
// The client does not retry commands on its own (MaxRetries -1): an error
// is "outcome unknown", which the Service handles (it goes on to the CAS),
// where a silent retry of an Acquire that landed would answer "held".
//
// Timeouts: a call returns by ctx's deadline (go-redis's
// ContextTimeoutEnabled: the deadline becomes the socket's), so a server
// that hangs with its connections open (stopped, swapping, a network that
// drops packets) costs a caller its own deadline, which the Service sets
// (loot.Config.LockTimeout). A ctx without a deadline falls back to the
// client's ReadTimeout and WriteTimeout (5s each by default; set them
// through Options.Config): cancelling such a ctx does not interrupt a read
// already waiting on the socket. With Batch, the caller returns at its
// deadline while the batch it joined runs on under the client's timeouts.
//
// Use:
//
//	lock, err := redis.Open(ctx, "redis://cache:6379/0", redis.Options{})
//	svc, err := loot.New(loot.Config{Store: st, Inventory: inv, Fairness: history, Lock: lock})
package redis
