package lootfaults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// Families names the loot world's fault families, one field each, in
// matrix column order; the list itself is World.Families. Each is a
// generator preset (gen.go says how) and exercises what its coverage check
// (exercisesOf) names. Fields of one value rather than a constant each
// because a world package stays within 50 exported names (issue 21): a
// caller writes lootfaults.Families.Crash. The strings are the matrix's
// column names (results/loot keys on them); the value is never assigned.
var Families = struct {
	Clean            engine.Family // members claim, the scheduler settles at the deadline
	DuplicateClaim   engine.Family // every request arrives again: double clicks, client and gateway retries, 20 identical claims at once
	ConcurrentSettle engine.Family // every node triggers the settle at the same instant
	EarlySettle      engine.Family // a settle trigger before the deadline
	LateClaim        engine.Family // claims at and around the deadline
	LockExpiry       engine.Family // a settler stalls past the lock ttl and its lease; another trigger comes
	ClockSkew        engine.Family // node clocks seconds off the database's
	Crash            engine.Family // a node crashes at any effect of any request or compensation
	StoreError       engine.Family // a store, lock or inventory call fails (nothing happened), or one is down for 10..30 calls
	TimeoutSuccess   engine.Family // a store, lock or inventory call happens, the caller is told it timed out
	CancelRace       engine.Family // a cancel around the settle
	Outsider         engine.Family // non-members claim
	Ties             engine.Family // equal priority and fairness, claims in the same second or instant
	Quantity         engine.Family // several items, sometimes more than claimants
	CompensationRace engine.Family // compensation runs while a settler, stalled, is still delivering
	SharedLoot       engine.Family // two sessions drop the same loot code
	TeamChange       engine.Family // the team changes between two sessions: a member leaves, a new one joins
	FairChange       engine.Family // the fairness record changes during a run: wins counted, changes mid-settle
	IntentChange     engine.Family // members change their intent during the claim window, up, down, back, or repeat it
}{
	Clean: "clean", DuplicateClaim: "duplicate-claim", ConcurrentSettle: "concurrent-settle",
	EarlySettle: "early-settle", LateClaim: "late-claim", LockExpiry: "lock-expiry",
	ClockSkew: "clock-skew", Crash: "crash", StoreError: "store-error",
	TimeoutSuccess: "timeout-after-success", CancelRace: "cancel-race", Outsider: "outsider",
	Ties: "ties", Quantity: "quantity", CompensationRace: "compensation-race",
	SharedLoot: "shared-loot", TeamChange: "team-change", FairChange: "fair-change",
	IntentChange: "intent-change",
}

// families lists every family in column order (World.Families).
var families = []engine.Family{
	Families.Clean, Families.DuplicateClaim, Families.ConcurrentSettle, Families.EarlySettle, Families.LateClaim, Families.LockExpiry, Families.ClockSkew,
	Families.Crash, Families.StoreError, Families.TimeoutSuccess, Families.CancelRace, Families.Outsider, Families.Ties, Families.Quantity, Families.CompensationRace,
	Families.SharedLoot, Families.TeamChange, Families.FairChange,
	Families.IntentChange,
}

var familyDocs = map[engine.Family]string{
	Families.Clean:            "members claim once each and the scheduler settles at the deadline: the baseline",
	Families.DuplicateClaim:   "a claim, open, start, settle or cancel arrives again: a double click, a client retry, a gateway resend on another node, 20 copies of a claim at once",
	Families.ConcurrentSettle: "every node triggers the same settle at the same instant, interleaved at every env call",
	Families.EarlySettle:      "a settle trigger arrives before the deadline (a player or a skewed scheduler)",
	Families.LateClaim:        "claims arrive just before, at and just after the deadline, racing the settle",
	Families.LockExpiry:       "a settler stalls past the lock's ttl and its lease while another node is triggered",
	Families.ClockSkew:        "node clocks run seconds ahead of or behind the database's; their schedulers trigger by them",
	Families.Crash:            "a node crashes before or after any effect of an open, a start, a claim, a settle, a cancel or compensation, or loses its answer",
	Families.StoreError:       "a store, lock or inventory call fails transiently (nothing happened), or one of them is down for 10..30 calls in a row",
	Families.TimeoutSuccess:   "a store, lock or inventory call happens but the caller is told it timed out",
	Families.CancelRace:       "an operator cancels the session around its settle",
	Families.Outsider:         "players outside the team snapshot claim",
	Families.Ties:             "claims of equal priority and fairness in the same second, or at the same instant",
	Families.Quantity:         "several items drop, sometimes more than there are claimants",
	Families.CompensationRace: "the compensation job runs while a stalled settler is still delivering",
	Families.SharedLoot:       "two sessions drop the same loot code: the same boss drops the same item twice",
	Families.TeamChange:       "the team changes between two sessions: a member leaves, a new one joins, and both claim",
	Families.FairChange:       "the fairness record counts every win, and changes while a session settles",
	Families.IntentChange:     "members send 1..3 further claims in the window: another intent (an upgrade, a downgrade, back to an earlier one) or the same again, on either node",
}

// joins are the loot world's joined families (engine.World.Joins), each
// for a case no part makes alone, which its doc says.
var joins = []engine.Family{engine.Join(Families.EarlySettle, Families.LockExpiry)}

var joinDocs = map[engine.Family]string{
	// stalledSettler stalls one of the session's settle deliveries, which
	// under early-settle are its 1..2 early triggers and the scheduler's:
	// an early one, 2..9.9 s into the 10 s window, stalled 15 or 35 s,
	// wakes past the deadline.
	joins[0]: "a settle trigger before the deadline stalls past it and the lock's ttl while another node is triggered: " +
		"a settler that began early and wakes late must freeze the claims at its freeze (source 004 §2.3: at the lock), not as of its start",
}

// familyDoc is f's one-line meaning (a documented join's reason; another
// joined family's parts', joined).
func familyDoc(f engine.Family) string {
	if d, ok := familyDocs[f]; ok {
		return d
	}
	if d, ok := joinDocs[f]; ok {
		return d
	}
	if parts := f.Parts(); len(parts) > 1 {
		docs := make([]string, len(parts))
		for i, p := range parts {
			docs[i] = familyDoc(p)
		}
		return strings.Join(docs, "; and ")
	}
	return "not a family"
}

// checkFamily reports whether f is a family of Families or a Join of them
// that can be generated; the error lists the valid names.
func checkFamily(f engine.Family) error {
	if slices.Contains(families, f) {
		return nil
	}
	var concurrent, faulty bool
	if err := engine.CheckParts(f, families, "loot family"); err != nil {
		return err
	}
	for _, p := range f.Parts() {
		switch p {
		case Families.ConcurrentSettle, Families.Ties:
			concurrent = true
		case Families.Crash, Families.StoreError, Families.TimeoutSuccess, Families.LockExpiry, Families.CompensationRace:
			faulty = true
		}
	}
	if concurrent && faulty {
		return fmt.Errorf("family %q joins a concurrent family with one that injects faults; a concurrent schedule has none", string(f))
	}
	return nil
}

// Properties names the properties the loot world's designs are judged by
// (package lootprops checks them), one field each, in report order; the
// list itself is World.Properties. Fields of one value, as Families, for
// the same budget of names.
var Properties = struct {
	NoOverGrant, NoDupGrant, NoLostGrant, FrozenClaims, RuleOrder, Replayable,
	MembersOnly, OnTime, InWindow, ForwardOnly, HonestAnswer, Responsive engine.Property
}{
	NoOverGrant: "NoOverGrant", NoDupGrant: "NoDupGrant", NoLostGrant: "NoLostGrant",
	FrozenClaims: "FrozenClaims", RuleOrder: "RuleOrder", Replayable: "Replayable",
	MembersOnly: "MembersOnly", OnTime: "OnTime", InWindow: "InWindow", ForwardOnly: "ForwardOnly",
	HonestAnswer: "HonestAnswer", Responsive: "Responsive",
}

// properties lists every property in report order (World.Properties).
var properties = []engine.Property{
	Properties.NoOverGrant, Properties.NoDupGrant, Properties.NoLostGrant, Properties.FrozenClaims, Properties.RuleOrder, Properties.Replayable,
	Properties.MembersOnly, Properties.OnTime, Properties.InWindow, Properties.ForwardOnly, Properties.HonestAnswer, Properties.Responsive,
}
