package memory

import (
	"context"
	"fmt"
	"sync"

	"github.com/onceproof/onceproof/ref/loot"
)

// History is a loot.FairnessProvider over a table the server fills (Set).
// A player never Set has no history: the zero loot.Fairness.
type History struct {
	mu sync.Mutex
	m  map[holding]loot.Fairness
}

var _ loot.FairnessProvider = (*History)(nil)

// NewHistory returns an empty table.
func NewHistory() *History { return &History{m: map[holding]loot.Fairness{}} }

// Set records player's history with loot code lootCode.
func (h *History) Set(lootCode string, player loot.PlayerID, f loot.Fairness) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[holding{player, lootCode}] = f
}

// Fairness implements loot.FairnessProvider.
func (h *History) Fairness(ctx context.Context, lootCode string, players []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: fairness: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[loot.PlayerID]loot.Fairness, len(players))
	for _, p := range players {
		out[p] = h.m[holding{p, lootCode}]
	}
	return out, nil
}
