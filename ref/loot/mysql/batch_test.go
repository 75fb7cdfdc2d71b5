package mysql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestDeliverBatchIsOneRoundTripAllOrNothing: the Store's
// MarkDeliveredBatch is one packet sent, answers in the order asked, and
// names a grant never recorded (loot.ErrNotFound). The Inventory's DeliverBatch
// delivers a settle's grants in one packet sent, first or repeated (a
// number repeated in the batch too), applying each once and marking each
// SUCCESS; a batch naming a grant never recorded is loot.ErrNotFound and
// applies none of the others; under both isolation levels.
func TestDeliverBatchIsOneRoundTripAllOrNothing(t *testing.T) {
	const reproduce = "ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run 'TestDeliverBatchIsOneRoundTripAllOrNothing' ./ref/loot/mysql/"
	eachIsolationCounted(t, func(t *testing.T, s *mysql.Store, clock *testClock, sent *writes) {
		defer func() {
			if t.Failed() {
				t.Log("to reproduce: " + reproduce)
			}
		}()
		ctx := t.Context()
		sess, _, err := s.Open(ctx, loot.Spec{No: "B", Dungeon: "D", Loot: "L", Quantity: 3,
			Deadline: base.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2, 3}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartClaiming(ctx, sess.No); err != nil {
			t.Fatal(err)
		}
		for p := loot.PlayerID(1); p <= 3; p++ {
			if _, _, err := s.Claim(ctx, sess.No, p, loot.Need); err != nil {
				t.Fatal(err)
			}
		}
		clock.advance(t, time.Minute)
		fz, err := s.BeginSettle(ctx, sess.No, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		d, err := loot.Decide(fz, map[loot.PlayerID]loot.Fairness{1: {}, 2: {}, 3: {}}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordGrants(ctx, d); err != nil {
			t.Fatal(err)
		}
		gs, err := s.Grants(ctx, sess.No)
		if err != nil || len(gs) < 2 {
			t.Fatalf("Grants = %d, %v; want at least 2", len(gs), err)
		}
		inv := s.Inventory()
		applied := func(want int) {
			t.Helper()
			for _, g := range gs {
				if n, err := inv.Applied(ctx, g.No); err != nil || n != want {
					t.Errorf("Applied(%s) = %d, %v; want %d", g.No, n, err, want)
				}
			}
		}
		bogus := gs[0]
		bogus.No = "B:404"
		before := sent.n.Load()
		if err := inv.DeliverBatch(ctx, append(append([]loot.Grant{}, gs...), bogus)); !errors.Is(err, loot.ErrNotFound) {
			t.Errorf("DeliverBatch with %s, never recorded, = %v; want loot.ErrNotFound", bogus.No, err)
		}
		applied(0)
		before = sent.n.Load()
		if _, err := s.MarkDeliveredBatch(ctx, []string{gs[0].No, bogus.No}); !errors.Is(err, loot.ErrNotFound) {
			t.Errorf("MarkDeliveredBatch with %s, never recorded, = %v; want loot.ErrNotFound", bogus.No, err)
		}
		nos := []string{gs[1].No, gs[0].No, gs[1].No}
		marked, err := s.MarkDeliveredBatch(ctx, nos)
		if n := sent.n.Load() - before; n != 2 {
			t.Errorf("two MarkDeliveredBatch cost %d packets sent, want 2", n)
		}
		if err != nil || len(marked) != len(nos) {
			t.Fatalf("MarkDeliveredBatch(%v) = %d grants, %v; want %d", nos, len(marked), err, len(nos))
		}
		for i, g := range marked {
			if g.No != nos[i] || g.Status != loot.GrantSuccess || g.Player != map[string]loot.PlayerID{gs[0].No: gs[0].Player, gs[1].No: gs[1].Player}[g.No] {
				t.Errorf("MarkDeliveredBatch(%v)[%d] = %+v; want grant %s, SUCCESS", nos, i, g, nos[i])
			}
		}
		for _, step := range []struct {
			name  string
			batch []loot.Grant
		}{
			{"first", gs},
			{"repeated", gs},
			{"a number twice", append(append([]loot.Grant{}, gs...), gs[1])},
		} {
			before = sent.n.Load()
			if err := inv.DeliverBatch(ctx, step.batch); err != nil {
				t.Errorf("DeliverBatch (%s) = %v", step.name, err)
			}
			if n := sent.n.Load() - before; n != 1 {
				t.Errorf("DeliverBatch (%s) cost %d packets sent, want 1", step.name, n)
			}
			applied(1)
		}
		got, err := s.Grants(ctx, sess.No)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range got {
			if g.Status != loot.GrantSuccess {
				t.Errorf("grant %s after DeliverBatch is %s, want SUCCESS", g.No, g.Status)
			}
		}
	})
}
