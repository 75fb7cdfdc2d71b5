package lootfaults

import (
	"fmt"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// worldRule names a world rule; see checkWorld.
type worldRule string

// The world rules, in the order checkWorld checks them.
const (
	ruleAnnounced worldRule = "announced" // a session is opened once, started once, and triggered
	ruleSent      worldRule = "sent"      // every request is delivered at least once
	ruleTrigger   worldRule = "trigger"   // family rule: the scheduler triggers at the deadline, by the database's clock or a skewed node's
	ruleSeconds   worldRule = "seconds"   // family rule: only ties has two claims of a session in one second
	ruleOutsiders worldRule = "outsiders" // family rule: only the outsider family has outsiders claim
	ruleCancels   worldRule = "cancels"   // family rule: only cancel-race and the fault families (faultedCancel) cancel
	ruleClocks    worldRule = "clocks"    // family rule: only clock-skew skews a clock
	rulePauses    worldRule = "pauses"    // family rule: only lock-expiry, compensation-race and late-claim pause a node
	ruleIntents   worldRule = "intents"   // family rule: only intent-change has a player send two claim requests in one session
	ruleLoot      worldRule = "loot"      // family rule: only shared-loot has two sessions drop one loot code
	ruleTeam      worldRule = "team"      // family rule: only team-change has a session's snapshot differ from the team
	ruleFairness  worldRule = "fairness"  // family rule: only fair-change changes a fairness record during a run
)

// worldError is a schedule outside the world model: the rule and what
// breaks it.
type worldError struct {
	Rule   worldRule
	Detail string
}

func (e *worldError) Error() string { return fmt.Sprintf("the world rule %s: %s", e.Rule, e.Detail) }

// checkWorld reports the first way s leaves the world model (nil if none):
// every session opened and started by exactly one request each and
// triggered by at least one settle (the game server and its scheduler do
// their part); every request delivered at least once (an at-least-once
// sender sends what it has); and the family rules (outsiders, cancels,
// skewed clocks, pauses, a player's second claim, a shared loot code, a
// changed team and a changing fairness record only in their families), so
// that a family's column means what its doc says and a bug of one
// dimension shows in one column. It assumes a schedule
// validate accepts. Generators satisfy it; a shrinker keeps it by
// rejecting the candidates it rejects.
func checkWorld(s Schedule) error {
	count := make([][3]int, len(s.Sessions)) // per session: opens, starts, settles
	for _, r := range s.Requests {
		switch r.Kind {
		case Kinds.OpenSession:
			count[r.Session][0]++
		case Kinds.StartClaims:
			count[r.Session][1]++
		case Kinds.SettleNow:
			count[r.Session][2]++
		}
	}
	for i, c := range count {
		if c[0] != 1 || c[1] != 1 || c[2] < 1 {
			return &worldError{ruleAnnounced, fmt.Sprintf("x%d has %d open, %d start and %d settle requests: want one, one and at least one", i, c[0], c[1], c[2])}
		}
	}
	sent := make([]bool, len(s.Requests))
	for _, d := range s.Deliveries {
		sent[d.Msg] = true
	}
	if i := slices.Index(sent, false); i >= 0 {
		return &worldError{ruleSent, fmt.Sprintf("r%d is never delivered (an at-least-once sender sends every request it has)", i)}
	}
	has := func(f engine.Family) bool { return slices.Contains(s.Family.Parts(), f) }
	if !has(Families.Ties) {
		// Claims in one whole second of the database's clock tie where
		// claim times are kept in seconds (source 004's DATETIME): the ties
		// column's business, so no other column depends on it.
		first := map[int]time.Duration{} // claim request -> its first planned delivery
		for _, d := range s.Deliveries {
			if r := s.Requests[d.Msg]; r.Kind == Kinds.ClaimItem {
				if _, ok := first[d.Msg]; !ok {
					first[d.Msg] = d.At
				}
			}
		}
		second := map[[2]int64]int{} // (session, second) -> a claim in it
		for _, r := range s.Requests {
			at, ok := first[r.ID]
			if !ok {
				continue
			}
			k := [2]int64{int64(r.Session), int64(at / time.Second)}
			if other, dup := second[k]; dup {
				return &worldError{ruleSeconds, fmt.Sprintf("r%d and r%d claim x%d in the same second (%s): only ties puts two claims in one second", other, r.ID, r.Session, at.Truncate(time.Second))}
			}
			second[k] = r.ID
		}
	}
	if !has(Families.EarlySettle) {
		// A node's scheduler fires when its own clock reads the deadline:
		// at most maxSkew early by the database's clock, in clock-skew.
		early := time.Duration(0)
		if has(Families.ClockSkew) {
			early = maxSkew
		}
		for _, d := range s.Deliveries {
			if r := s.Requests[d.Msg]; r.Kind == Kinds.SettleNow && d.At < s.Sessions[r.Session].Deadline-early {
				return &worldError{ruleTrigger, fmt.Sprintf("r%d triggers x%d's settle at %s, before its deadline %s by more than %s: only early-settle triggers early", r.ID, r.Session, d.At, s.Sessions[r.Session].Deadline, early)}
			}
		}
	}
	for _, r := range s.Requests {
		switch {
		case r.Kind == Kinds.ClaimItem && !s.Member(r.Player) && !has(Families.Outsider):
			return &worldError{ruleOutsiders, fmt.Sprintf("r%d is a claim by player %d, outside the team: only the outsider family has outsiders", r.ID, r.Player)}
		case r.Kind == Kinds.CancelSession && !has(Families.CancelRace) && !has(Families.Crash) && !has(Families.StoreError) && !has(Families.TimeoutSuccess):
			return &worldError{ruleCancels, fmt.Sprintf("r%d cancels x%d: only cancel-race, crash, store-error and timeout-after-success cancel", r.ID, r.Session)}
		}
	}
	if (slices.ContainsFunc(s.Skews, func(d time.Duration) bool { return d != 0 }) || s.LockSkew != 0) && !has(Families.ClockSkew) {
		return &worldError{ruleClocks, "a clock is skewed: only clock-skew skews clocks"}
	}
	if s.HasPause() && !has(Families.LockExpiry) && !has(Families.CompensationRace) && !has(Families.LateClaim) {
		return &worldError{rulePauses, "a node pauses: only lock-expiry, compensation-race and late-claim pause nodes"}
	}
	if !has(Families.IntentChange) {
		// A player's second claim (another intent, or the same sent
		// anew) is intent-change's business; a copy or retry of one claim
		// is one request, every family's.
		claimOf := map[[2]int64]int{} // (session, player) -> its claim request
		for _, r := range s.Requests {
			if r.Kind != Kinds.ClaimItem {
				continue
			}
			k := [2]int64{int64(r.Session), int64(r.Player)}
			if other, dup := claimOf[k]; dup {
				return &worldError{ruleIntents, fmt.Sprintf("r%d and r%d are both player %d's claims on x%d: only intent-change has a player claim again", other, r.ID, r.Player, r.Session)}
			}
			claimOf[k] = r.ID
		}
	}
	if !has(Families.SharedLoot) {
		// One boss dropping one item code twice (one grant_no per
		// session, session:player:loot) is shared-loot's business:
		// elsewhere a design that keys grants by player and loot code
		// alone would fail in whichever column drew two sessions.
		by := map[string]int{} // loot code -> the first session dropping it
		for _, x := range s.Sessions {
			if other, dup := by[x.Loot()]; dup {
				return &worldError{ruleLoot, fmt.Sprintf("x%d and x%d both drop %s: only shared-loot shares a loot code between sessions", other, x.ID, x.Loot())}
			}
			by[x.Loot()] = x.ID
		}
	}
	if !has(Families.TeamChange) {
		// A snapshot other than the team (a member gone, a newcomer) is
		// team-change's business: elsewhere the live team and every
		// session's snapshot agree, so a design that judges claims by the
		// live team fails in team-change alone.
		for _, x := range s.Sessions {
			if x.Members != nil && !slices.Equal(x.Members, s.Team) {
				return &worldError{ruleTeam, fmt.Sprintf("x%d's team snapshot %v is not the team %v: only team-change changes the team between sessions", x.ID, x.Members, s.Team)}
			}
		}
	}
	if !has(Families.FairChange) {
		// A record that moves during a run (a win counted as the item
		// lands, a change at a freeze) is fair-change's business:
		// elsewhere two reads of a player's record agree, so a settler
		// that reads it twice, or at the claim, fails in fair-change
		// alone.
		if s.CountWins {
			return &worldError{ruleFairness, "the fairness record counts wins: only fair-change changes fairness during a run"}
		}
		for _, x := range s.Sessions {
			if len(x.Bumps) > 0 {
				return &worldError{ruleFairness, fmt.Sprintf("x%d changes player %d's fairness record when it freezes: only fair-change changes fairness during a run", x.ID, x.Bumps[0].Player)}
			}
		}
	}
	return nil
}
