package lootservice_test

import (
	"testing"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

// TestAStopOutlastsTheLockTTLItIsGiven: a planned SIGSTOP lasts the
// service's lock ttl plus one settle pass, lootd's 30 s default when none
// is given, so a takeover happens while the settler is stopped; and the
// plan's two faults of a kind fall one in each half of the span.
func TestAStopOutlastsTheLockTTLItIsGiven(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestAStopOutlastsTheLockTTLItIsGiven"
	f := lootfaults.Families.LockExpiry
	w, err := lootservice.Generate(f, 3, "st", scale, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ttl, want time.Duration }{{2 * time.Second, 3 * time.Second}, {0, 31 * time.Second}} {
		p := lootservice.PlanFaults(f, 3, w, 2, lootservice.Reach{Process: true, LockTTL: c.ttl})
		if len(p.Faults) != 2 {
			t.Fatalf("lock-expiry planned %v, want two SIGSTOPs\nTo reproduce: %s", p, repro)
		}
		for _, x := range p.Faults {
			if x.Kind != lootservice.ProcStop || x.For != c.want {
				t.Errorf("lock ttl %v: planned %+v, want a SIGSTOP of %v\nTo reproduce: %s", c.ttl, x, c.want, repro)
			}
		}
	}
	p := lootservice.PlanFaults(f, 3, w, 2, lootservice.Reach{Net: true})
	first, last := w.Sends[0].At, w.Sends[len(w.Sends)-1].At
	mid := first + (last-first)/2
	if len(p.Faults) != 2 || p.Faults[0].At > mid+time.Millisecond || p.Faults[1].At < mid {
		t.Errorf("stalls at %v, want one in each half of %v..%v\nTo reproduce: %s", p.Faults, first, last, repro)
	}
}
