package loot

import (
	"context"
	"time"
)

// Lock is a distributed lock with owner tokens (Redis SET NX PX, and a
// script to release). It is an optimisation only: it spares the database
// the CAS attempts of settlers that would lose anyway. Correctness rests on
// BeginSettle and the fence, so a lock that expires under a slow settler,
// a lock service that is down, or no Lock at all cannot make a session
// settle twice.
//
// Contract:
//   - Acquire sets key to token with a time-to-live of ttl, if key is
//     absent or its ttl ended by the lock service's clock, in one atomic
//     step (SET key token NX PX ttl), and reports whether it did. It never
//     extends or takes over a live key, its own included.
//   - Release deletes key only if it still holds token, in one atomic
//     compare-and-delete (a Lua script: if GET == token then DEL), and
//     reports whether it deleted. A GET then a DEL from the client is
//     wrong: the key can expire and be taken by another settler between
//     them, and the DEL removes the new holder's lock.
//   - An error means the outcome is unknown (the key may or may not be
//     set or deleted); the Service then goes on to the CAS, which decides.
//     A key left behind ends with its ttl.
//   - Each call returns, with an error, once ctx's deadline passes, also
//     when the lock service hangs without closing the connection. The
//     Service gives every call a deadline (Config.LockTimeout) and treats
//     its expiry as any other error, so a stalled lock service slows each
//     settle by at most two timeouts and never blocks it.
//   - Safe for concurrent use.
type Lock interface {
	Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error)
	Release(ctx context.Context, key, token string) (bool, error)
}

// LockKey is the key Settle locks for session no: the source document's
// prefix loot:settle:lock: and the session number.
func LockKey(no string) string { return "loot:settle:lock:" + no }
