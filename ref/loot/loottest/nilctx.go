package loottest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// RunNilContext checks that every method of s and inv refuses a nil
// context with loot.ErrBadArgument, without panicking, and that the store
// still answers afterwards. calls is how many times each method is called:
// more than s's pool has connections, so a call that leaks one (or, as
// database/sql does on a nil context, panics holding the pool's lock)
// leaves the next ones hanging. Every call must return within a second (a
// local round trip takes < 10ms); it stops at the first that does not,
// and reports false: the pool hangs, and closing it would hang too.
func RunNilContext(t *testing.T, s loot.Store, inv loot.Inventory, calls int) bool {
	t.Helper()
	var nilCtx context.Context
	g := loot.Grant{No: "S:1:RING-7", Session: "S", Player: 1, Loot: "RING-7", Quantity: 1, Rank: 1}
	methods := []struct {
		name string
		call func() error
	}{
		{"Open", func() error {
			_, _, err := s.Open(nilCtx, loot.Spec{No: "S", Dungeon: "D", Loot: "RING-7", Quantity: 1,
				Deadline: time.Now().Add(time.Hour), Rule: loot.RuleCount, Members: []loot.PlayerID{1}})
			return err
		}},
		{"StartClaiming", func() error { _, err := s.StartClaiming(nilCtx, "S"); return err }},
		{"Claim", func() error { _, _, err := s.Claim(nilCtx, "S", 1, loot.Need); return err }},
		{"Cancel", func() error { _, err := s.Cancel(nilCtx, "S"); return err }},
		{"BeginSettle", func() error { _, err := s.BeginSettle(nilCtx, "S", time.Second); return err }},
		{"RecordGrants", func() error { _, err := s.RecordGrants(nilCtx, loot.Decision{Session: "S", Fence: 1}); return err }},
		{"MarkDelivered", func() error { _, err := s.MarkDelivered(nilCtx, g.No); return err }},
		{"LeaseGrants", func() error { _, err := s.LeaseGrants(nilCtx, 1, loot.DefaultBackoff); return err }},
		{"Overdue", func() error { _, err := s.Overdue(nilCtx, 1); return err }},
		{"Session", func() error { _, err := s.Session(nilCtx, "S"); return err }},
		{"Claims", func() error { _, err := s.Claims(nilCtx, "S"); return err }},
		{"Grants", func() error { _, err := s.Grants(nilCtx, "S"); return err }},
		{"Snapshot", func() error { _, err := s.Snapshot(nilCtx, "S"); return err }},
		{"Inventory.Deliver", func() error { return inv.Deliver(nilCtx, g) }},
	}
	for _, m := range methods {
		for i := range calls {
			err, ok := within(m.call)
			if !ok {
				t.Errorf("%s(nil ctx) #%d did not return within 1s: the pool hangs", m.name, i+1)
				return false
			}
			if !errors.Is(err, loot.ErrBadArgument) {
				t.Errorf("%s(nil ctx) #%d = %v, want ErrBadArgument", m.name, i+1, err)
			}
		}
		err, ok := within(func() error { _, err := s.Session(context.Background(), "NONE"); return err })
		if !ok {
			t.Errorf("Session after %d calls of %s(nil ctx) did not answer within 1s: the pool hangs", calls, m.name)
			return false
		}
		if !errors.Is(err, loot.ErrNotFound) {
			t.Errorf("Session after %s(nil ctx) = %v, want ErrNotFound", m.name, err)
		}
	}
	return true
}

// within runs f under recover (a panic becomes its error) and reports
// false if it did not return within a second.
func within(f func() error) (error, bool) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("panicked: %v", r)
			}
		}()
		done <- f()
	}()
	select {
	case err := <-done:
		return err, true
	case <-time.After(time.Second):
		return nil, false
	}
}
