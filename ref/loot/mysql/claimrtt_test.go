package mysql_test

import (
	"errors"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// TestClaimIsOneRoundTripWhateverTheAnswer: a claim is one packet sent
// (one round trip: its transaction, the write, the read that answers it
// and the commit) whether it writes, repeats or is refused, under both
// isolation levels; and each answer is still the one loot.Store documents.
func TestClaimIsOneRoundTripWhateverTheAnswer(t *testing.T) {
	for _, iso := range isolations {
		t.Run("isolation="+iso.name, func(t *testing.T) {
			dsn := testserver.MariaDB(t)
			clock := newTestClock(t, dsn)
			var sent writes
			s, err := mysql.Open(t.Context(), dsn+iso.params, mysql.Options{ClockTable: clockTable, Config: sent.count})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			sess, _, err := s.Open(t.Context(), loot.Spec{No: "S", Dungeon: "D", Loot: "L", Quantity: 1,
				Deadline: base.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartClaiming(t.Context(), sess.No); err != nil {
				t.Fatal(err)
			}
			for _, step := range []struct {
				name    string
				no      string
				player  loot.PlayerID
				intent  loot.Intent
				advance time.Duration // the clock moves by it before the claim
				created bool
				want    error
				at      time.Duration // the answer's claim time, after base
			}{
				{name: "first claim", no: "S", player: 1, intent: loot.Need, created: true},
				{name: "identical repeat", no: "S", player: 1, intent: loot.Need, advance: time.Second}, // keeps the first time
				{name: "changed intent", no: "S", player: 1, intent: loot.Greed, at: time.Second},       // takes the new one
				{name: "not a member", no: "S", player: 999, intent: loot.Need, want: loot.ErrNotMember},
				{name: "no session", no: "S-404", player: 1, intent: loot.Need, want: loot.ErrNotFound},
				{name: "past the deadline", no: "S", player: 1, intent: loot.Need, advance: time.Minute, want: loot.ErrClaimsClosed},
			} {
				if step.advance > 0 {
					clock.advance(t, step.advance)
				}
				before := sent.n.Load()
				c, created, err := s.Claim(t.Context(), step.no, step.player, step.intent)
				if n := sent.n.Load() - before; n != 1 {
					t.Errorf("%s: Claim sent %d packets, want 1", step.name, n)
				}
				switch {
				case step.want != nil:
					if !errors.Is(err, step.want) {
						t.Errorf("%s: Claim = %v, want %v", step.name, err, step.want)
					}
				case err != nil || created != step.created || c.Intent != step.intent:
					t.Errorf("%s: Claim = %+v, created %v, %v; want intent %s, created %v", step.name, c, created, err, step.intent, step.created)
				case !c.At.Equal(loot.StoreTime(base.Add(step.at))):
					t.Errorf("%s: claim time %v, want %v", step.name, c.At, loot.StoreTime(base.Add(step.at)))
				}
			}
			if t.Failed() {
				t.Logf("to reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run '%s' ./ref/loot/mysql/", t.Name())
			}
		})
	}
}
