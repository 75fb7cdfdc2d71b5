package lootfaults_test

import (
	"strings"
	"testing"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// TestParseReadsTheDimensions: a session's loot code, its own team
// snapshot and its fairness changes, and count-wins, read back as written,
// and a members or bump line that names another session than the last
// declared is refused with its line.
func TestParseReadsTheDimensions(t *testing.T) {
	text := `
family loot:shared-loot+team-change+fair-change
nodes 2
retry 250ms
max-attempts 4
team 1 2 3
count-wins
session x0 quantity=1 deadline=10s
session x1 quantity=1 deadline=30s loot=item0
members x1 1 3 7
bump x1 player=3 wins=2
request r0 open x0
request r1 open x1
deliver at=0s r0 node=0
deliver at=20s r1 node=0
`
	s, err := lootfaults.World.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	x := s.Sessions[1]
	if !s.CountWins || x.Loot() != "item0" || s.Sessions[0].Loot() != "item0" || !s.MemberOf(1, 7) || s.MemberOf(1, 2) || !s.MemberOf(0, 2) || len(x.Bumps) != 1 || x.Bumps[0] != (lootfaults.Fair{Player: 3, Wins: 2}) {
		t.Fatalf("parsed %+v, want x1 sharing item0, team 1 3 7, player 3 +2 wins at its freeze, count-wins:\n%s", s, text)
	}
	if again, err := lootfaults.World.Parse(lootfaults.World.Format(s)); err != nil || lootfaults.World.Format(again) != lootfaults.World.Format(s) {
		t.Fatalf("format does not parse back (%v):\n%s", err, lootfaults.World.Format(s))
	}
	bad := strings.Replace(text, "members x1 1 3 7", "members x0 1 3 7", 1)
	if _, err := lootfaults.World.Parse(bad); err == nil || !strings.Contains(err.Error(), "line 10") {
		t.Fatalf("members of x0 after x1 parsed (err %v), want a line 10 error", err)
	}
}
