package loot

import (
	"context"
	"fmt"
	"time"
)

// DefaultLockTimeout is Config.LockTimeout when it is zero: lease/100,
// at least 100ms (minLockTimeout), at most lease/4. The lock's two calls
// then cost a settle at most 2% of a long lease and half of a short one.
func DefaultLockTimeout(lease time.Duration) time.Duration {
	// Each bound's reason:
	//
	//   - lease/100: a lock service that has not answered in 1% of the lease
	//     is stalled, not slow (a healthy Redis round trip is 0.1-1ms on
	//     loopback or a LAN: the default lease's 300ms is hundreds of them),
	//     and Acquire plus Release then cost a settle at most 2% of the
	//     lease, the time it has before another node takes it over and the
	//     budget an API settle answers within.
	//   - minLockTimeout: on a short lease (tests run 300ms-3s) 1% is a few
	//     milliseconds, which a healthy server on a loaded machine (a GC
	//     pause, two shared cores under -race) overruns; each overrun skips
	//     the lock for nothing.
	//   - lease/4: whatever the floor, the two calls take at most half a
	//     short lease.
	return min(max(lease/100, minLockTimeout), lease/4)
}

// minLockTimeout: 100ms, two orders of magnitude above a healthy round
// trip and above a loaded test machine's stalls (DefaultLockTimeout's body
// says why).
const minLockTimeout = 100 * time.Millisecond

// takeLock takes the settle lock of session no, if the Service has one,
// and returns its release (never nil) for the caller to defer. Held by
// another: ErrAlreadySettling. Any other outcome, an error or a timeout
// included, goes on to the CAS, which decides (see Lock).
//
// Each call is bounded by s.lockMax: a lock service that hangs (a
// stopped Redis keeps its TCP connections open and never answers) costs
// a settle that long per call, not the client's own socket timeout
// (go-redis: 5s per call) or forever.
func (s *Service) takeLock(ctx context.Context, no string) (release func(), err error) {
	if s.lock == nil {
		return func() {}, nil
	}
	token, err := s.token()
	if err != nil {
		return func() {}, nil // no token, no lock: the CAS decides (Config.Tokens)
	}
	key := LockKey(no)
	actx, cancel := context.WithTimeout(ctx, s.lockMax)
	ok, err := s.lock.Acquire(actx, key, token, s.lease)
	cancel()
	if err == nil && !ok {
		return nil, fmt.Errorf("loot: settle %s: lock held by another settler: %w", no, ErrAlreadySettling)
	}
	// Held, or unknown (an Acquire that timed out may have set it):
	// release it either way; a failed Release is left to the ttl. The
	// release runs under its own bound, not under ctx's cancellation: a
	// settle its caller gave up on still frees the key now rather than
	// leave the next settler of this session refused for the lease. It is
	// synchronous, so Settle returns with its lock gone (or its bound
	// spent) and no goroutine outlives the call; on a dead lock service
	// that costs at most one more lockTimeout.
	return func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.lockMax)
		defer cancel()
		_, _ = s.lock.Release(rctx, key, token)
	}, nil
}

// LockTimeout is the bound of each of the Service's lock calls
// (Config.LockTimeout, or its default): what a caller probing the same
// lock service (a readiness check) should allow it too.
func (s *Service) LockTimeout() time.Duration { return s.lockMax }
