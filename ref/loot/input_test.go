package loot_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Input every store can hold is accepted and anything one store cannot is
// ErrBadArgument before any store sees it, so memory, PostgreSQL and
// MariaDB answer alike (cmd/lootd's input_test.go replays the same on the
// three).

func TestNormalizeRefusesWhatSomeStoreCannotHold(t *testing.T) {
	good := loot.Spec{No: "S", Dungeon: "D", Loot: "RING-7", Quantity: 1, Deadline: t0.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{1}}
	lastMicro := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	for _, c := range []struct {
		name   string
		change func(*loot.Spec)
		ok     bool
	}{
		{"quantity MaxQuantity", func(s *loot.Spec) { s.Quantity = loot.MaxQuantity }, true},
		{"quantity MaxQuantity+1 (over a 32-bit INT column)", func(s *loot.Spec) { s.Quantity = loot.MaxQuantity + 1 }, false},
		{"quantity max int", func(s *loot.Spec) { s.Quantity = math.MaxInt }, false},
		{"quantity -1", func(s *loot.Spec) { s.Quantity = -1 }, false},
		{"64 bytes of two-byte characters", func(s *loot.Spec) { s.No = strings.Repeat("é", loot.MaxCodeLen/2) }, true},
		{"a four-byte character (utf8mb4)", func(s *loot.Spec) { s.Loot = "SWORD-🗡" }, true},
		{"65 bytes of two-byte characters and one", func(s *loot.Spec) { s.Dungeon = "d" + strings.Repeat("é", loot.MaxCodeLen/2) }, false},
		{"NUL in the number", func(s *loot.Spec) { s.No = "S\x00" }, false},
		{"NUL in the dungeon code", func(s *loot.Spec) { s.Dungeon = "\x00" }, false},
		{"NUL in the loot code", func(s *loot.Spec) { s.Loot = "RING\x007" }, false},
		{"tab (C0) in the number", func(s *loot.Spec) { s.No = "S\t1" }, false},
		{"DEL in the dungeon code", func(s *loot.Spec) { s.Dungeon = "D\x7f" }, false},
		{"NEL (C1) in the loot code", func(s *loot.Spec) { s.Loot = "RING\u0085" }, false},
		{"invalid UTF-8 in the number", func(s *loot.Spec) { s.No = "S\xff" }, false},
		{"a truncated sequence in the dungeon code", func(s *loot.Spec) { s.Dungeon = "D\xc3" }, false},
		{"a UTF-16 surrogate in the loot code", func(s *loot.Spec) { s.Loot = "\xed\xa0\x80" }, false},
		{"deadline at the last microsecond of 9999", func(s *loot.Spec) { s.Deadline = lastMicro }, true},
		{"deadline 1ns past it (truncated to it)", func(s *loot.Spec) { s.Deadline = lastMicro.Add(999 * time.Nanosecond) }, true},
		{"deadline in year 10000", func(s *loot.Spec) { s.Deadline = lastMicro.Add(time.Microsecond) }, false},
		{"deadline in 9999 here, 10000 in UTC", func(s *loot.Spec) {
			s.Deadline = time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("UTC-2", -2*3600))
		}, false},
		{"deadline in year 1000", func(s *loot.Spec) { s.Deadline = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC) }, true},
		{"deadline in year 999", func(s *loot.Spec) { s.Deadline = time.Date(999, 12, 31, 23, 59, 59, 0, time.UTC) }, false},
	} {
		spec := good
		c.change(&spec)
		_, err := spec.Normalize()
		switch {
		case c.ok && err != nil:
			t.Errorf("Normalize with %s = %v, want it accepted: every store holds it", c.name, err)
		case !c.ok && !errors.Is(err, loot.ErrBadArgument):
			t.Errorf("Normalize with %s = %v, want ErrBadArgument", c.name, err)
		}
	}
}

// countingStore counts the calls that reach the store.
type countingStore struct {
	loot.Store
	calls atomic.Int32
}

func (s *countingStore) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	s.calls.Add(1)
	return s.Store.StartClaiming(ctx, no)
}

func (s *countingStore) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	s.calls.Add(1)
	return s.Store.Claim(ctx, no, p, in)
}

func (s *countingStore) Cancel(ctx context.Context, no string) (loot.Session, error) {
	s.calls.Add(1)
	return s.Store.Cancel(ctx, no)
}

func (s *countingStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	s.calls.Add(1)
	return s.Store.BeginSettle(ctx, no, lease)
}

func (s *countingStore) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	s.calls.Add(1)
	return s.Store.Snapshot(ctx, no)
}

// TestServiceRefusesBadSessionNumbersBeforeItsStore calls every entry
// point that takes a session number with numbers no store can hold: each
// is ErrBadArgument, and the store is never asked (PostgreSQL would fail
// the statement, outcome unknown; memory and MariaDB would say not found).
func TestServiceRefusesBadSessionNumbersBeforeItsStore(t *testing.T) {
	w := newWorld(t)
	st := &countingStore{Store: w.store}
	svc := w.node(loot.Config{Store: st})
	ctx := t.Context()
	for _, no := range []string{"", "S\x00", "S\xff", "S\n", strings.Repeat("S", loot.MaxCodeLen+1)} {
		for name, call := range map[string]func() error{
			"StartClaiming": func() error { _, err := svc.StartClaiming(ctx, no); return err },
			"Claim": func() error {
				_, err := svc.Claim(ctx, loot.Caller{Player: 1}, loot.ClaimRequest{Session: no, Intent: loot.Need})
				return err
			},
			"Cancel": func() error { _, err := svc.Cancel(ctx, no); return err },
			"Settle": func() error { _, err := svc.Settle(ctx, no); return err },
			"Audit":  func() error { _, err := svc.Audit(ctx, no); return err },
		} {
			if err := call(); !errors.Is(err, loot.ErrBadArgument) || errors.Is(err, loot.ErrOutcomeUnknown) {
				t.Errorf("%s(%q) = %v, want ErrBadArgument", name, no, err)
			}
		}
	}
	if n := st.calls.Load(); n != 0 {
		t.Errorf("the store was called %d times with numbers the Service must refuse first", n)
	}
	if err := (loot.ClaimRequest{Session: "S", Intent: loot.Need}).Validate(); err != nil {
		t.Errorf("Validate of a good request = %v", err)
	}
}
