package mysql

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestSettling: a close of the entry's fence takes it (CLOSED, the
// decision's allocation, members the caller cannot change), another fence
// does not, forget spares a newer fence's entry, and a full cache makes
// room instead of growing.
func TestSettling(t *testing.T) {
	var c settling
	members := []loot.PlayerID{1, 2, 3}
	began := loot.Session{Spec: loot.Spec{No: "S-1", Quantity: 2, Members: members}, Status: loot.StatusSettling,
		Fence: 2, SettleUntil: time.Date(2026, 3, 1, 12, 0, 15, 0, time.UTC)}
	c.put(began)
	members[0] = 99 // the caller's Frozen is the caller's
	d := loot.Decision{Session: "S-1", Fence: 1, Grants: make([]loot.Grant, 2)}
	if _, ok := c.closed(d); ok {
		t.Fatal("closed answered fence 1 from fence 2's entry")
	}
	d.Fence = 2
	got, ok := c.closed(d)
	want := began
	want.Members = []loot.PlayerID{1, 2, 3}
	want.Status, want.Allocated = loot.StatusClosed, 2
	if !ok {
		t.Fatal("closed found no entry of fence 2")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("closed (-want +got):\n%s", diff)
	}
	if _, ok := c.closed(d); ok {
		t.Error("closed answered twice from one entry")
	}

	c.put(began)
	c.forget("S-1", 1)
	if _, ok := c.closed(d); !ok {
		t.Error("forget of fence 1 removed fence 2's entry")
	}
	c.put(began)
	c.forget("S-1", 2)
	if _, ok := c.closed(d); ok {
		t.Error("forget of fence 2 kept its entry")
	}

	for i := range settlingCap + 10 {
		s := began
		s.No = fmt.Sprintf("S-%d", i)
		c.put(s)
	}
	if n := len(c.m); n != settlingCap {
		t.Errorf("%d entries after %d puts, want the cap %d", n, settlingCap+10, settlingCap)
	}
}
