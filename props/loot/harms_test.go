package lootprops

import (
	"slices"
	"strings"
	"testing"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// TestHarmsNameTheKit: the harms list and the code agree: every property
// and family it names exists, every property answers some harm, and a harm
// no property catches says why it is not judged.
func TestHarmsNameTheKit(t *testing.T) {
	const run = "go test -run '^TestHarmsNameTheKit$' ./props/loot/"
	answers := map[string]bool{}
	for _, h := range harms {
		for _, p := range h.props {
			if !slices.Contains(lootfaults.World.Properties, p) {
				t.Errorf("harm %q (source 004 §%s) names the property %q, which the world does not judge (%s)", h.harm, h.section, p, run)
			}
			answers[string(p)] = true
		}
		if len(h.props) > 0 && !slices.Contains(lootfaults.World.Families, h.family) {
			t.Errorf("harm %q (source 004 §%s) names the family %q, which the world does not generate (%s)", h.harm, h.section, h.family, run)
		}
		if len(h.props) == 0 && !strings.HasPrefix(h.why, "not judged: ") {
			t.Errorf("harm %q (source 004 §%s) has no property and no \"not judged: why\" (%s)", h.harm, h.section, run)
		}
	}
	for _, p := range lootfaults.World.Properties {
		if !answers[string(p)] {
			t.Errorf("property %s answers no harm of the list (%s)", p, run)
		}
	}
}
