package lootfaults

import (
	"fmt"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// The loot world's fault families, in matrix column order. Each is a
// generator preset (gen.go says how) and exercises what its coverage
// check (exercisesOf) names.
const (
	Clean            engine.Family = "clean"             // members claim, the scheduler settles at the deadline
	DuplicateClaim   engine.Family = "duplicate-claim"   // double clicks, client and gateway retries, 20 identical claims at once
	ConcurrentSettle engine.Family = "concurrent-settle" // every node triggers the settle at the same instant
	EarlySettle      engine.Family = "early-settle"      // a settle trigger before the deadline
	LateClaim        engine.Family = "late-claim"        // claims at and around the deadline
	LockExpiry       engine.Family = "lock-expiry"       // a settler stalls past the lock ttl and its lease; another trigger comes
	ClockSkew        engine.Family = "clock-skew"        // node clocks seconds off the database's
	Crash            engine.Family = "crash"             // a node crashes at any effect of a claim, a settle or compensation
	StoreError       engine.Family = "store-error"       // a store, lock or inventory call fails (nothing happened)
	TimeoutSuccess   engine.Family = "timeout-after-success"
	CancelRace       engine.Family = "cancel-race"       // a cancel around the settle
	Outsider         engine.Family = "outsider"          // non-members claim
	Ties             engine.Family = "ties"              // equal priority and fairness, claims in the same second or instant
	Quantity         engine.Family = "quantity"          // several items, sometimes more than claimants
	CompensationRace engine.Family = "compensation-race" // compensation runs while a settler, stalled, is still delivering
)

// Families lists every family in column order.
var Families = []engine.Family{
	Clean, DuplicateClaim, ConcurrentSettle, EarlySettle, LateClaim, LockExpiry, ClockSkew,
	Crash, StoreError, TimeoutSuccess, CancelRace, Outsider, Ties, Quantity, CompensationRace,
}

var familyDocs = map[engine.Family]string{
	Clean:            "members claim once each and the scheduler settles at the deadline: the baseline",
	DuplicateClaim:   "a claim arrives again: a double click, a client retry, a gateway resend on another node, 20 copies at once",
	ConcurrentSettle: "every node triggers the same settle at the same instant, interleaved at every env call",
	EarlySettle:      "a settle trigger arrives before the deadline (a player or a skewed scheduler)",
	LateClaim:        "claims arrive just before, at and just after the deadline, racing the settle",
	LockExpiry:       "a settler stalls past the lock's ttl and its lease while another node is triggered",
	ClockSkew:        "node clocks run seconds ahead of or behind the database's; their schedulers trigger by them",
	Crash:            "a node crashes before or after any effect of a claim, a settle or compensation, or loses its answer",
	StoreError:       "a store, lock or inventory call fails transiently (nothing happened)",
	TimeoutSuccess:   "a store, lock or inventory call happens but the caller is told it timed out",
	CancelRace:       "an operator cancels the session around its settle",
	Outsider:         "players outside the team snapshot claim",
	Ties:             "claims of equal priority and fairness in the same second, or at the same instant",
	Quantity:         "several items drop, sometimes more than there are claimants",
	CompensationRace: "the compensation job runs while a stalled settler is still delivering",
}

// familyDoc is f's one-line meaning (a joined family's parts', joined).
func familyDoc(f engine.Family) string {
	if d, ok := familyDocs[f]; ok {
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
	if slices.Contains(Families, f) {
		return nil
	}
	var concurrent, faulty bool
	if err := engine.CheckParts(f, Families, "loot family"); err != nil {
		return err
	}
	for _, p := range f.Parts() {
		switch p {
		case ConcurrentSettle, Ties:
			concurrent = true
		case Crash, StoreError, TimeoutSuccess, LockExpiry, CompensationRace:
			faulty = true
		}
	}
	if concurrent && faulty {
		return fmt.Errorf("family %q joins a concurrent family with one that injects faults; a concurrent schedule has none", string(f))
	}
	return nil
}

// The properties the loot world's designs are judged by (package lootprops
// checks them), in report order.
const (
	NoOverGrant  engine.Property = "NoOverGrant"
	NoDupGrant   engine.Property = "NoDupGrant"
	NoLostGrant  engine.Property = "NoLostGrant"
	FrozenClaims engine.Property = "FrozenClaims"
	RuleOrder    engine.Property = "RuleOrder"
	Replayable   engine.Property = "Replayable"
	MembersOnly  engine.Property = "MembersOnly"
	OnTime       engine.Property = "OnTime"
	ForwardOnly  engine.Property = "ForwardOnly"
	HonestAnswer engine.Property = "HonestAnswer"
	Responsive   engine.Property = "Responsive"
)

// Properties lists every property in report order.
var Properties = []engine.Property{
	NoOverGrant, NoDupGrant, NoLostGrant, FrozenClaims, RuleOrder, Replayable,
	MembersOnly, OnTime, ForwardOnly, HonestAnswer, Responsive,
}
