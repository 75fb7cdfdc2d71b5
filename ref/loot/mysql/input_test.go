package mysql_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
)

// TestDataErrorIsBadArgumentNotOutcomeUnknown calls the Store itself,
// past the Service's checks, with grants whose values MariaDB refuses in
// strict mode (1366: invalid UTF-8 for utf8mb4; 1406: a grant number over
// VARCHAR(160)): each is loot.ErrBadArgument, a definite answer, never an
// outcome unknown that tells the caller to repeat it; it writes nothing,
// and the right decision lands after it.
func TestDataErrorIsBadArgumentNotOutcomeUnknown(t *testing.T) {
	root := testserver.MariaDB(t)
	clock := newTestClock(t, root)
	st := open(t, root)
	ctx := t.Context()
	spec := loot.Spec{No: "S1", Dungeon: "D", Loot: "L", Quantity: 1, Deadline: base.Add(time.Minute),
		Rule: loot.RuleCount, Members: []loot.PlayerID{1}}
	if _, _, err := st.Open(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartClaiming(ctx, "S1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Claim(ctx, "S1", 1, loot.Need); err != nil {
		t.Fatal(err)
	}
	clock.advance(t, time.Minute)
	fz, err := st.BeginSettle(ctx, "S1", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	decision := loottest.DecisionFor(t, fz, 1, time.Minute)
	for name, lootCode := range map[string]string{
		"invalid UTF-8 loot code (1366)":        "L\xff",
		"grant number over VARCHAR(160) (1406)": strings.Repeat("L", 200),
	} {
		if _, err := st.RecordGrants(ctx, decision(lootCode)); !errors.Is(err, loot.ErrBadArgument) {
			t.Errorf("RecordGrants with %s = %v, want ErrBadArgument: the caller would retry it forever", name, err)
		}
	}
	if sess, err := st.RecordGrants(ctx, decision("L")); err != nil || sess.Status != loot.StatusClosed {
		t.Fatalf("RecordGrants after the refused ones = %v, %v; want it CLOSED: the refusals wrote nothing", sess.Status, err)
	}
}
