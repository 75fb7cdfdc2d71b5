package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// TestRedisLocksAnswerAsTheWorldsModel: a run's lock service on a real
// Redis (lootref.LockService of the command's lock server) gives every
// call the answer the world's model gives, under any sequence of calls and
// times: in particular a key whose ttl ended by the lock clock is free,
// though Redis's own ttl (an hour longer) is not.
func TestRedisLocksAnswerAsTheWorldsModel(t *testing.T) {
	srv := testserver.Redis(t)
	prefix := testserver.RedisPrefix(t)
	ctx := context.Background()
	server, err := openRedisLocks(ctx, srv.URL(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := server.close(ctx); err != nil {
			t.Error(err)
		}
	}()
	// Two keys and three tokens: calls collide on a key and on a holder.
	// Whole-second steps of 0-4 s against ttls of 1-5 s: a ttl ends within
	// a few calls about as often as not, and a call lands exactly on a
	// ttl's end (now == until, the boundary where the key is free).
	keys, tokens := []string{"loot:settle:lock:1", "loot:settle:lock:2"}, []string{"a", "b", "c"}
	rapid.Check(t, func(rt *rapid.T) {
		if err := server.empty(ctx); err != nil {
			rt.Fatal(err)
		}
		// One lock service per run, on an emptied server, as a slot's.
		locks := lootref.LockService(server)
		model := lootfaults.NewLockModel()
		var now time.Duration
		for i := range rapid.IntRange(1, 40).Draw(rt, "calls") {
			now += time.Duration(rapid.IntRange(0, 4).Draw(rt, "step")) * time.Second
			key := rapid.SampledFrom(keys).Draw(rt, "key")
			var got, want any
			var call string
			var err error
			switch op := rapid.IntRange(0, 3).Draw(rt, "op"); op {
			case 0:
				token := rapid.SampledFrom(tokens).Draw(rt, "token")
				ttl := time.Duration(rapid.IntRange(1, 5).Draw(rt, "ttl")) * time.Second
				call = fmt.Sprintf("SetNX(%v, %s, %s, %v)", now, key, token, ttl)
				got, err = locks.SetNX(now, key, token, ttl)
				want, _ = model.SetNX(now, key, token, ttl)
			case 1:
				call = fmt.Sprintf("Get(%v, %s)", now, key)
				got, err = locks.Get(now, key)
				want, _ = model.Get(now, key)
			case 2:
				call = fmt.Sprintf("Del(%v, %s)", now, key)
				got, err = locks.Del(now, key)
				want, _ = model.Del(now, key)
			default:
				token := rapid.SampledFrom(tokens).Draw(rt, "token")
				call = fmt.Sprintf("Unlock(%v, %s, %s)", now, key, token)
				got, err = locks.Unlock(now, key, token)
				want, _ = model.Unlock(now, key, token)
			}
			if err != nil {
				rt.Fatalf("call %d, %s: the lock service failed: %v", i, call, err)
			}
			if got != want {
				rt.Fatalf("call %d, %s: Redis answered %v, the world's model %v", i, call, got, want)
			}
		}
	})
}

// lockFamilies are the loot families a run with -lock checks: those of
// the store tests and lock-expiry, where a settler pauses past the lock's
// ttl and another takes the lock.
const lockFamilies = lootStoreFamilies + ",lock-expiry"

// TestLootMatrixOnPostgresWithRedisLockMatchesMemory: loot-ref on
// PostgreSQL with its lock on Redis, the deployment, has the cells
// of loot-ref in memory with the world's lock, run for run (coverage
// included: the locks taken after their holder's ttl ended are the same),
// and leaves no key behind.
func TestLootMatrixOnPostgresWithRedisLockMatchesMemory(t *testing.T) {
	url := testserver.Postgres(t)
	srv := testserver.StartRedis(t) // its own: the key count below is this test's alone
	m := runStoreMatrixOf[lootprops.Matrix](t, "loot-ref", "-subject", "loot", "-store", url, "-lock", srv.URL(), "-families", lockFamilies, "-n", lootStoreN)
	mem := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{lootref.Design{}}, Families: familiesOf(lockFamilies), N: m.N, Seed: m.Seed})
	sameCells(t, m, mem, "loot-ref@postgres+redis", "loot-ref in memory")
	if len(m.Rows) == 1 {
		i := slices.Index(m.Families, lootfaults.Families.LockExpiry)
		if got := m.Rows[0].Cells[i].Coverage["lock-expired"]; got == 0 {
			t.Errorf("lock-expiry on Redis never took a lock whose holder's ttl had ended: the world's lock clock did not reach the server")
		}
	}
	if n := redisKeys(t, srv.Addr, "*")(); n > 0 {
		t.Errorf("matrix -lock left %d keys behind", n)
	}
}

// TestLootMatrixWithOnlyARedisLock: -lock without -store runs loot-ref's
// in-memory store with the lock on Redis, named as such.
func TestLootMatrixWithOnlyARedisLock(t *testing.T) {
	srv := testserver.Redis(t)
	m := runStoreMatrixOf[lootprops.Matrix](t, "loot-ref", "-subject", "loot", "-lock", srv.URL(), "-families", "clean,lock-expiry", "-n", lootStoreN)
	mem := lootprops.RunMatrix(lootprops.MatrixOptions{Designs: []lootfaults.Design{lootref.Design{}}, Families: familiesOf("clean,lock-expiry"), N: m.N, Seed: m.Seed})
	sameCells(t, m, mem, "loot-ref@memory+redis", "loot-ref in memory")
}

func TestLockFlagBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-lock", "redis://127.0.0.1:6379/0"}, exitBadUse, "needs -subject loot"},
		{[]string{"-subject", "loot", "-lock", "postgres://u:secret@127.0.0.1/x"}, exitBadUse, "is not a lock service: not a redis:// URL; want redis://"},
		{[]string{"-subject", "loot", "-lock", "redis://"}, exitBadUse, "no host"},
		{[]string{"-subject", "loot", "-lock", "redis://u:secret@127.0.0.1:1/0"}, exitFailed, "cannot use -lock redis://u:xxxxx@127.0.0.1:1/0: connection refused"},
	} {
		code, stdout, stderr := runCLI(append([]string{"matrix"}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stdout+stderr, "secret") {
			t.Errorf("matrix %s: exit %d, stderr %q; want exit %d and %q, no password", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
}

// TestLockOrStoreFailureNamesItsServer: with -store and -lock, the one
// that cannot be used is the one named.
func TestLockOrStoreFailureNamesItsServer(t *testing.T) {
	pg, rd := testserver.Postgres(t), testserver.Redis(t).URL()
	for _, c := range []struct{ store, lock, want string }{
		{pg, "redis://u:secret@127.0.0.1:1/0", "cannot use -lock redis://u:xxxxx@127.0.0.1:1/0: connection refused"},
		{"postgres://u:secret@127.0.0.1:1/x?connect_timeout=5", rd, "cannot use -store postgres://u:xxxxx@127.0.0.1:1/x?connect_timeout=5: connection refused"},
	} {
		args := []string{"matrix", "-subject", "loot", "-store", c.store, "-lock", c.lock}
		code, stdout, stderr := runCLI(args...)
		if code != exitFailed || !strings.Contains(stderr, c.want) || strings.Contains(stdout+stderr, "secret") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q, no password", strings.Join(args, " "), code, stderr, exitFailed, c.want)
		}
	}
}
