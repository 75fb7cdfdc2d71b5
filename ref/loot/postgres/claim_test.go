package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// TestClaimIsOneStatementWhateverTheAnswer: a claim is one statement (one
// round trip) whether it writes, repeats or is refused, since the read
// that explains a write of nothing rides in the statement that wrote; and
// each answer is still the one loot.Store documents.
func TestClaimIsOneStatementWhateverTheAnswer(t *testing.T) {
	url, pool := clockedDB(t, clockBase)
	all := &statements{} // the empty marker counts every statement
	st := openStore(t, url, postgres.Options{TestClock: testClock, Config: func(c *pgxpool.Config) { c.ConnConfig.Tracer = all }})
	defer st.Close()
	w := &world{t: t, url: url, pool: pool, st: st, clock: true}
	spec := loot.Spec{No: "C-1", Dungeon: "ABYSS-3", Loot: "L", Quantity: 1, Deadline: w.now().Add(time.Minute),
		Rule: loot.RuleSeeded, Members: team(2)}
	if _, _, err := st.Open(t.Context(), spec); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartClaiming(t.Context(), spec.No); err != nil {
		t.Fatal(err)
	}
	p := spec.Members[0]
	for _, step := range []struct {
		name    string
		no      string
		player  loot.PlayerID
		intent  loot.Intent
		advance time.Duration // the clock moves by it before the claim
		created bool
		want    error
		at      time.Duration // the answer's claim time, after clockBase
	}{
		{name: "first claim", no: "C-1", player: p, intent: loot.Need, created: true},
		{name: "identical repeat", no: "C-1", player: p, intent: loot.Need, advance: time.Second}, // keeps the first time
		{name: "changed intent", no: "C-1", player: p, intent: loot.Greed, at: time.Second},       // takes the new one
		{name: "not a member", no: "C-1", player: 999, intent: loot.Need, want: loot.ErrNotMember},
		{name: "no session", no: "C-404", player: p, intent: loot.Need, want: loot.ErrNotFound},
		{name: "past the deadline", no: "C-1", player: p, intent: loot.Need, advance: time.Minute, want: loot.ErrClaimsClosed},
	} {
		w.advance(step.advance)
		before := all.n.Load()
		c, created, err := st.Claim(t.Context(), step.no, step.player, step.intent)
		if n := all.n.Load() - before; n != 1 {
			t.Errorf("%s: Claim ran %d statements, want 1", step.name, n)
		}
		switch {
		case step.want != nil:
			if !errors.Is(err, step.want) {
				t.Errorf("%s: Claim = %v, want %v", step.name, err, step.want)
			}
		case err != nil || created != step.created || c.Intent != step.intent:
			t.Errorf("%s: Claim = %+v, created %v, %v; want intent %s, created %v", step.name, c, created, err, step.intent, step.created)
		case !c.At.Equal(loot.StoreTime(clockBase.Add(step.at))):
			t.Errorf("%s: claim time %v, want %v", step.name, c.At, loot.StoreTime(clockBase.Add(step.at)))
		}
	}
	if t.Failed() {
		t.Log("to reproduce: ONCEPROOF_REQUIRE_SERVICES=1 go test -race -count=1 -run TestClaimIsOneStatementWhateverTheAnswer ./ref/loot/postgres/")
	}
}
