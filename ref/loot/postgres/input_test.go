package postgres_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/loottest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestDataExceptionIsBadArgumentNotOutcomeUnknown calls the Store itself,
// past the Service's checks, with values PostgreSQL refuses (SQLSTATE
// 22021: NUL, invalid UTF-8): each is loot.ErrBadArgument, a definite
// answer, never an outcome unknown that tells the caller to repeat it. A
// decision with such a value writes nothing, and the right one lands
// after it; with Options.Batch too, where one caller's bad value must not
// fail the others' batch.
func TestDataExceptionIsBadArgumentNotOutcomeUnknown(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(fmt.Sprintf("batch=%v", batch), func(t *testing.T) {
			url, pool := clockedDB(t, clockBase)
			st := openStore(t, url, postgres.Options{TestClock: testClock, Batch: batch})
			defer st.Close()
			ctx := t.Context()
			for _, no := range []string{"S\x00", "S\xff"} {
				for name, call := range map[string]func() error{
					"StartClaiming": func() error { _, err := st.StartClaiming(ctx, no); return err },
					"Cancel":        func() error { _, err := st.Cancel(ctx, no); return err },
					"Claim":         func() error { _, _, err := st.Claim(ctx, no, 1, loot.Need); return err },
					"BeginSettle":   func() error { _, err := st.BeginSettle(ctx, no, time.Minute); return err },
					"Session":       func() error { _, err := st.Session(ctx, no); return err },
					"Claims":        func() error { _, err := st.Claims(ctx, no); return err },
					"Grants":        func() error { _, err := st.Grants(ctx, no); return err },
					"Snapshot":      func() error { _, err := st.Snapshot(ctx, no); return err },
					"MarkDelivered": func() error { _, err := st.MarkDelivered(ctx, no+":1:L"); return err },
				} {
					if err := call(); !errors.Is(err, loot.ErrBadArgument) {
						t.Errorf("%s(%q) = %v, want ErrBadArgument: the caller would retry it forever", name, no, err)
					}
				}
			}

			spec := loot.Spec{No: "S1", Dungeon: "D", Loot: "L", Quantity: 1, Deadline: clockBase.Add(time.Minute),
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
			if _, err := pool.Exec(ctx, `UPDATE `+testClock+` SET now = now + interval '1 minute'`); err != nil {
				t.Fatal(err)
			}
			fz, err := st.BeginSettle(ctx, "S1", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			decision := loottest.DecisionFor(t, fz, 1, time.Minute)
			if _, err := st.RecordGrants(ctx, decision("L\x00")); !errors.Is(err, loot.ErrBadArgument) {
				t.Errorf("RecordGrants of a NUL loot code = %v, want ErrBadArgument", err)
			}
			if sess, err := st.RecordGrants(ctx, decision("L")); err != nil || sess.Status != loot.StatusClosed {
				t.Fatalf("RecordGrants after the refused one = %v, %v; want it CLOSED: the refusal wrote nothing", sess.Status, err)
			}
		})
	}
}
