package loot

import (
	"cmp"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// goldenClaims is a fixed claim set whose hash is pinned below.
func goldenClaims() []Candidate {
	at := time.Date(2026, 3, 1, 20, 0, 0, 123456000, time.UTC)
	return []Candidate{
		{Claim{Session: "S-42", Player: 1002, Intent: Need, At: at}, Fairness{Wins: 1, Since: at.Add(-24 * time.Hour)}},
		{Claim{Session: "S-42", Player: 1001, Intent: Greed, At: at.Add(time.Microsecond)}, Fairness{SeedMilli: 1500, LastWin: at.Add(-time.Hour)}},
		{Claim{Session: "S-42", Player: 1003, Intent: Pass, At: at.Add(2 * time.Microsecond)}, Fairness{}},
	}
}

// goldenClaimsHash pins ClaimsHash: audit records keep hashes, so the
// encoding must never change under a recorded tag (a new encoding is a new
// claimsHashTag, and a new vector). It was computed apart from this code,
// by a few lines of Python following ClaimsHash's documented encoding
// (tag, then per claim sorted by player: >q player, >q len(intent),
// intent, >q micros(at), >q wins, >q seed, >q micros(last win), >q
// micros(since), micros of a zero time 0).
const goldenClaimsHash = "8f293a54f4d3e44bef289a09972aa5d46af2dd85346dd0d0c18319015c3a4877"

func TestClaimsHashIsPinnedAndOrderFree(t *testing.T) {
	cs := goldenClaims()
	if got := ClaimsHash(cs); got != goldenClaimsHash {
		t.Errorf("ClaimsHash(golden) = %s, want %s", got, goldenClaimsHash)
	}
	rev := slices.Clone(cs)
	slices.Reverse(rev)
	if ClaimsHash(rev) != ClaimsHash(cs) {
		t.Error("ClaimsHash depends on the order of claims")
	}
	// Every field counts, times to the microsecond.
	for name, change := range map[string]func(*Candidate){
		"player":   func(c *Candidate) { c.Player++ },
		"intent":   func(c *Candidate) { c.Intent = Greed },
		"at":       func(c *Candidate) { c.At = c.At.Add(time.Microsecond) },
		"wins":     func(c *Candidate) { c.Fairness.Wins++ },
		"seed":     func(c *Candidate) { c.Fairness.SeedMilli++ },
		"last win": func(c *Candidate) { c.Fairness.LastWin = c.At },
		"since":    func(c *Candidate) { c.Fairness.Since = c.At },
	} {
		changed := goldenClaims()
		change(&changed[0])
		if ClaimsHash(changed) == goldenClaimsHash {
			t.Errorf("changing %s leaves the hash unchanged", name)
		}
	}
}

func goldenSnapshot(t *testing.T) Snapshot {
	t.Helper()
	sess := Session{Spec: Spec{
		No: "S-42", Dungeon: "ABYSS-3", Loot: "RING-7", Quantity: 1, Rule: RuleSeeded,
		Deadline: time.Date(2026, 3, 1, 20, 0, 30, 0, time.UTC), Members: []PlayerID{1001, 1002, 1003},
	}, Status: StatusSettling, Fence: 1}
	fair := map[PlayerID]Fairness{}
	var claims []Claim
	for _, c := range goldenClaims() {
		claims = append(claims, c.Claim)
		fair[c.Player] = c.Fairness
	}
	slices.SortFunc(claims, func(a, b Claim) int { return cmp.Compare(a.Player, b.Player) })
	d, err := Decide(Frozen{Session: sess, Claims: claims}, fair, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d.Snapshot
}

// TestReplayFindsEveryTampering: a snapshot replays; changing its winners,
// a claim, the rule or adding an outsider's claim is found and shown as a
// go-cmp diff.
func TestReplayFindsEveryTampering(t *testing.T) {
	snap := goldenSnapshot(t)
	if err := Replay(snap); err != nil {
		t.Fatalf("Replay(untouched) = %v", err)
	}
	if !slices.Equal(snap.Winners, []PlayerID{1002}) {
		t.Fatalf("golden winners %v, want [1002] (NEED over GREED)", snap.Winners)
	}
	for name, tc := range map[string]struct {
		change func(*Snapshot)
		want   string
	}{
		"winners":  {func(s *Snapshot) { s.Winners = []PlayerID{1001} }, "winners"},
		"claim":    {func(s *Snapshot) { s.Claims[1].Intent = Greed }, "claims hash"},
		"rule":     {func(s *Snapshot) { s.Rule = "v9" }, "unknown rule"},
		"outsider": {func(s *Snapshot) { s.Members = s.Members[:2] }, "non-members"},
		"quantity": {func(s *Snapshot) { s.Quantity = 2 }, "winners"},
	} {
		s := goldenSnapshot(t)
		tc.change(&s)
		err := Replay(s)
		var re *ReplayError
		if !errors.As(err, &re) || !strings.Contains(re.What, tc.want) || re.Diff == "" {
			t.Errorf("Replay after changing %s = %v, want a *ReplayError about %q with a diff", name, err, tc.want)
		}
	}
}

// TestDecideRefusesWhatItCannotExplain: an unknown rule, a claimant the
// fairness provider did not answer for, a claim from outside the team.
func TestDecideRefusesWhatItCannotExplain(t *testing.T) {
	sess := Session{Spec: Spec{No: "S", Loot: "RING-7", Quantity: 1, Rule: RuleCount, Members: []PlayerID{1, 2}}, Fence: 1}
	claims := []Claim{{Session: "S", Player: 1, Intent: Need}, {Session: "S", Player: 2, Intent: Pass}}
	all := map[PlayerID]Fairness{1: {}}
	if _, err := Decide(Frozen{Session: sess, Claims: claims}, all, 0); err != nil {
		t.Fatalf("Decide = %v (PASS claimants need no fairness)", err)
	}
	if _, err := Decide(Frozen{Session: sess, Claims: claims}, map[PlayerID]Fairness{}, 0); !errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("Decide without a claimant's fairness = %v, want ErrOutcomeUnknown", err)
	}
	unknown := sess
	unknown.Rule = "v9"
	if _, err := Decide(Frozen{Session: unknown, Claims: claims}, all, 0); !errors.Is(err, ErrBadArgument) {
		t.Errorf("Decide under an unknown rule = %v, want ErrBadArgument", err)
	}
	outsider := append(slices.Clone(claims), Claim{Session: "S", Player: 9, Intent: Need})
	all[9] = Fairness{}
	var re *ReplayError
	if _, err := Decide(Frozen{Session: sess, Claims: outsider}, all, 0); !errors.As(err, &re) {
		t.Errorf("Decide with an outsider's claim = %v, want a *ReplayError", err)
	}
}

// TestBackoffDoublesToItsCap pins Backoff.Lease, including far past the
// cap (no overflow).
func TestBackoffDoublesToItsCap(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 5 * time.Second}
	var got []time.Duration
	for n := 1; n <= 5; n++ {
		got = append(got, b.Lease(n))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("leases %v, want %v", got, want)
	}
	huge := Backoff{Base: time.Second, Max: time.Duration(1<<63 - 1)}
	if d := huge.Lease(1000); d <= 0 || d > huge.Max {
		t.Errorf("Lease(1000) with an unbounded Max = %v, want in (0, Max]", d)
	}
}
