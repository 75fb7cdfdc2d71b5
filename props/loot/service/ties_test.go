package lootservice_test

import (
	"testing"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

// TestCorrectServicesHoldRuleOrderUnderTies: lootd -dev and the fake,
// each ranking by the rule, hold RuleOrder (judged, in some run) and
// every other property under the ties family's claims of one priority
// and fairness at one instant: the judge's tie rules (one read's rows
// order their claims; claims dated alike tie to the lower id) find no
// failure where there is none.
func TestCorrectServicesHoldRuleOrderUnderTies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts lootd and runs for about a minute")
	}
	const repro = "go test ./props/loot/service -count=1 -run TestCorrectServicesHoldRuleOrderUnderTies"
	for name, tg := range map[string]lootservice.Target{"lootd": startLootd(t, "-dev"), "fake": startFake(t, &fake{})} {
		sum := campaign(t, []lootservice.Target{tg}, []engine.Family{lootfaults.Families.Ties}, 4)
		for _, p := range sum.Properties {
			if p.Property == lootfaults.Properties.RuleOrder && p.Judged == 0 {
				t.Errorf("%s: RuleOrder never judged: %v\nTo reproduce: %s", name, p.Why, repro)
			}
			if p.Verdict == lootservice.Failed {
				t.Errorf("%s: %s failed: %v\nTo reproduce: %s", name, p.Property, p.Failures, repro)
			}
		}
	}
}
