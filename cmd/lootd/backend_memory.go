package main

import (
	"context"
	"sync"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// memoryBackendAt is -dev: ref/loot/memory's store with its own inventory,
// a lock on the process's clock, and wins counted from the inventory, all
// on now (the process's clock, config.now, outside tests).
func memoryBackendAt(now func() time.Time) *backend {
	st := &trackedStore{Store: memory.NewStore(now)}
	return &backend{
		kind: "memory", store: st, inventory: st.Inventory(),
		fairness: memoryWins{st.Store}, delivered: grantWins{st},
		lock:    memory.NewLock(now),
		now:     func(context.Context) (time.Time, error) { return now(), nil },
		pending: st.pending,
		ping:    func(context.Context) error { return nil },
		close:   func() error { return nil },
	}
}

// trackedStore remembers the sessions opened through it, so pending can
// count PENDING grants: memory.Store lists no grants but by session, and
// in -dev every session is opened through this process.
type trackedStore struct {
	*memory.Store
	mu  sync.Mutex
	nos []string
}

func (s *trackedStore) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	sess, created, err := s.Store.Open(ctx, spec)
	if created {
		s.mu.Lock()
		s.nos = append(s.nos, sess.No)
		s.mu.Unlock()
	}
	return sess, created, err
}

// pending reads every session's grants: O(sessions), for -dev only.
func (s *trackedStore) pending(ctx context.Context) (int, error) {
	n := 0
	err := s.eachGrant(ctx, func(g loot.Grant) {
		if g.Status == loot.GrantPending {
			n++
		}
	})
	return n, err
}

// eachGrant calls f with every grant of every session opened here.
func (s *trackedStore) eachGrant(ctx context.Context, f func(loot.Grant)) error {
	s.mu.Lock()
	nos := append([]string(nil), s.nos...)
	s.mu.Unlock()
	for _, no := range nos {
		gs, err := s.Grants(ctx, no)
		if err != nil {
			return err
		}
		for _, g := range gs {
			f(g)
		}
	}
	return nil
}

// grantWins counts a player's Wins as their SUCCESS grants of the loot
// code (backend.delivered): O(sessions), for -dev only.
type grantWins struct{ s *trackedStore }

func (w grantWins) Fairness(ctx context.Context, lootCode string, players []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	out := make(map[loot.PlayerID]loot.Fairness, len(players))
	for _, p := range players {
		out[p] = loot.Fairness{}
	}
	err := w.s.eachGrant(ctx, func(g loot.Grant) {
		if f, ok := out[g.Player]; ok && g.Loot == lootCode && g.Status == loot.GrantSuccess {
			f.Wins++
			out[g.Player] = f
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// memoryWins counts a player's Wins as the items of the loot code the
// store's inventory holds for them (sqlWins' counterpart).
type memoryWins struct{ st *memory.Store }

func (w memoryWins) Fairness(ctx context.Context, lootCode string, players []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make(map[loot.PlayerID]loot.Fairness, len(players))
	for _, p := range players {
		out[p] = loot.Fairness{Wins: int64(w.st.Holding(p, lootCode))}
	}
	return out, nil
}
