package loottest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// The lock mutations.
const (
	mutLockCheckThenSet    mutation = "lock-check-then-set"       // GET, then SET without NX
	mutLockNoNX            mutation = "lock-set-without-nx"       // takes a live key
	mutLockRenews          mutation = "lock-renews-own-key"       // the holder's Acquire extends
	mutLockNeverExpires    mutation = "lock-never-expires"        // no ttl
	mutLockReleaseAnyToken mutation = "lock-release-any-token"    // DEL without the compare
	mutLockGetThenDel      mutation = "lock-release-get-then-del" // the source document's unlock
	mutLockIgnoresContext  mutation = "lock-ignores-context"
)

func mutantLockHarness(m mutation) func(t *testing.T) loottest.LockHarness {
	return func(t *testing.T) loottest.LockHarness {
		clock := memory.NewClock(base)
		l := &mutLock{m: m, clock: clock, held: map[string]mutLease{}}
		return loottest.LockHarness{
			Open:    func(*testing.T) loot.Lock { return l },
			Advance: func(_ *testing.T, d time.Duration) { clock.Advance(d) },
		}
	}
}

type mutLease struct {
	token string
	until time.Time
}

// mutLock is a correct lock (a map behind a mutex) unless m says which
// rule to break.
type mutLock struct {
	m     mutation
	clock *memory.Clock
	mu    sync.Mutex
	held  map[string]mutLease
}

var errMutCtx = errors.New("mutlock: context")

func (l *mutLock) enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil && l.m != mutLockIgnoresContext {
		return errors.Join(errMutCtx, err)
	}
	return nil
}

// live reports whether key is held (locked).
func (l *mutLock) live(key string) (mutLease, bool) {
	h, ok := l.held[key]
	if !ok || (l.m != mutLockNeverExpires && !l.clock.Now().Before(h.until)) {
		return mutLease{}, false
	}
	return h, true
}

func (l *mutLock) Acquire(ctx context.Context, key, token string, ttl time.Duration) (bool, error) {
	if err := l.enter(ctx); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h, held := l.live(key)
	if l.m == mutLockCheckThenSet {
		l.mu.Unlock()
		time.Sleep(time.Millisecond) // the other GETs see the key free too
		l.mu.Lock()
	}
	renew := l.m == mutLockRenews && held && h.token == token
	if held && l.m != mutLockNoNX && !renew {
		return false, nil
	}
	l.held[key] = mutLease{token: token, until: l.clock.Now().Add(ttl)}
	return true, nil
}

func (l *mutLock) Release(ctx context.Context, key, token string) (bool, error) {
	if err := l.enter(ctx); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h, held := l.live(key)
	mine := held && (h.token == token || l.m == mutLockReleaseAnyToken)
	if l.m == mutLockGetThenDel && mine {
		l.mu.Unlock()
		l.awaitTakeover(key, h) // between the GET and the DEL
		l.mu.Lock()
	}
	if mine {
		delete(l.held, key)
	}
	return mine, nil
}

// awaitTakeover holds a GET-then-DEL release between its GET (which saw
// lease h, its own) and its DEL until another Acquire has taken the key:
// the widest window the document's unlock has, so the mutant deletes
// another holder's lock whenever its GET came first, however loaded the
// machine (a fixed 1 ms sleep left that to the scheduler).
func (l *mutLock) awaitTakeover(key string, h mutLease) {
	await(func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.held[key] != h
	})
}
