package redis_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/redis"
)

// TestCallsReturnByTheirDeadlineOnAHungServer: a SIGSTOPped server keeps
// its connections open and answers nothing. Every call (Acquire, Release,
// Ping; one command each and batched) returns an error by its ctx's
// deadline, not by the client's 5s socket timeout: the bound
// loot.Config.LockTimeout relies on (loot.Lock). Once the server goes on,
// the same Lock works again.
func TestCallsReturnByTheirDeadlineOnAHungServer(t *testing.T) {
	// 200ms: the deadline each call gets; 2s: the most it may take on a
	// loaded machine, well under go-redis's 5s ReadTimeout, which is what
	// a call would take if the deadline were ignored.
	const deadline, limit = 200 * time.Millisecond, 2 * time.Second
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			srv := testserver.StartRedis(t, "--appendonly", "no")
			l := open(t, srv.URL(), redis.Options{Batch: batch})
			key := loot.LockKey("HUNG-1")
			if ok, err := l.Acquire(t.Context(), key, "A", time.Minute); err != nil || !ok {
				t.Fatalf("Acquire before the pause = %v, %v", ok, err)
			}
			srv.Pause(t)
			for name, call := range map[string]func(context.Context) error{
				"Acquire": func(ctx context.Context) error {
					_, err := l.Acquire(ctx, loot.LockKey("HUNG-2"), "B", time.Minute)
					return err
				},
				"Release": func(ctx context.Context) error { _, err := l.Release(ctx, key, "A"); return err },
				"Ping":    func(ctx context.Context) error { return l.Ping(ctx) },
			} {
				ctx, cancel := context.WithTimeout(t.Context(), deadline)
				begin := time.Now()
				err := call(ctx)
				took := time.Since(begin)
				cancel()
				if err == nil {
					t.Errorf("%s on a stopped server = nil error, want a timeout", name)
				}
				if took > limit {
					t.Errorf("%s on a stopped server took %v with a %v deadline, want at most %v: the deadline does not bound the socket", name, took, deadline, limit)
				}
			}
			srv.Resume(t)
			// The calls sent during the pause may still run now (their
			// bytes were in the server's socket buffer): "outcome unknown".
			// A fresh key shows the client works again; the client
			// dropped the connections that timed out, so a try may still
			// meet one the pause left behind: up to 3, each with no
			// deadline but the client's own.
			var err error
			for range 3 {
				var ok bool
				if ok, err = l.Acquire(t.Context(), loot.LockKey("AFTER"), "C", time.Minute); err == nil {
					if !ok {
						t.Errorf("Acquire of a fresh key after the resume = false, want the lock")
					}
					break
				}
			}
			if err != nil {
				t.Errorf("Acquire after the resume, 3 tries: %v", err)
			}
		})
	}
}
