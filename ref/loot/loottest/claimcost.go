package loottest

import (
	"errors"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// ClaimCost is what RunClaimCost needs of a store under test.
type ClaimCost struct {
	// Store holds Session, opened and CLAIMING, whose deadline is one
	// minute after Base on the store's clock, with Player a member and
	// player 999 not.
	Store   loot.Store
	Session string
	Player  loot.PlayerID
	// Base is the store's clock when RunClaimCost starts; Advance moves
	// that clock on.
	Base    time.Time
	Advance func(time.Duration)
	// Count is how much the store has cost so far in Unit (statements,
	// packets sent: whatever one round trip is on its database).
	Count func() int64
	Unit  string
	// Reproduce is the command that runs the calling test alone.
	Reproduce string
	_         struct{}
}

// RunClaimCost claims once in each way a claim can be answered (a first
// claim, an identical repeat, a changed intent, a non-member, an unknown
// session, one past the deadline) and checks that each costs exactly one
// Unit and gets the answer loot.Store documents: a repeat keeps the first
// claim's time, a changed intent takes the new one.
func RunClaimCost(t *testing.T, c ClaimCost) {
	t.Helper()
	for _, step := range []struct {
		name    string
		no      string
		player  loot.PlayerID
		intent  loot.Intent
		advance time.Duration // the clock moves by it before the claim
		created bool
		want    error
		at      time.Duration // the answer's claim time, after Base
	}{
		{name: "first claim", no: c.Session, player: c.Player, intent: loot.Need, created: true},
		{name: "identical repeat", no: c.Session, player: c.Player, intent: loot.Need, advance: time.Second}, // keeps the first time
		{name: "changed intent", no: c.Session, player: c.Player, intent: loot.Greed, at: time.Second},       // takes the new one
		{name: "not a member", no: c.Session, player: 999, intent: loot.Need, want: loot.ErrNotMember},
		{name: "no session", no: c.Session + "-404", player: c.Player, intent: loot.Need, want: loot.ErrNotFound},
		{name: "past the deadline", no: c.Session, player: c.Player, intent: loot.Need, advance: time.Minute, want: loot.ErrClaimsClosed},
	} {
		if step.advance > 0 {
			c.Advance(step.advance)
		}
		before := c.Count()
		got, created, err := c.Store.Claim(t.Context(), step.no, step.player, step.intent)
		if n := c.Count() - before; n != 1 {
			t.Errorf("%s: Claim cost %d %s, want 1", step.name, n, c.Unit)
		}
		switch {
		case step.want != nil:
			if !errors.Is(err, step.want) {
				t.Errorf("%s: Claim = %v, want %v", step.name, err, step.want)
			}
		case err != nil || created != step.created || got.Intent != step.intent:
			t.Errorf("%s: Claim = %+v, created %v, %v; want intent %s, created %v", step.name, got, created, err, step.intent, step.created)
		case !got.At.Equal(loot.StoreTime(c.Base.Add(step.at))):
			t.Errorf("%s: claim time %v, want %v", step.name, got.At, loot.StoreTime(c.Base.Add(step.at)))
		}
	}
	if t.Failed() {
		t.Log("to reproduce: " + c.Reproduce)
	}
}
