package delivered

import (
	"fmt"
	"slices"
	"testing"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestTakeAnswersOnlyWhatItHoldsEntirely: Take answers a batch it holds
// whole, in the order asked (a repeated number at each place), and forgets
// it; a batch with one number it does not hold is no answer and keeps
// what it holds; Put past Max starts afresh.
func TestTakeAnswersOnlyWhatItHoldsEntirely(t *testing.T) {
	const run = "go test -count=1 -run TestTakeAnswersOnlyWhatItHoldsEntirely ./ref/loot/internal/delivered/"
	var d Record
	a, b := loot.Grant{No: "S:1:L", Status: loot.GrantSuccess}, loot.Grant{No: "S:2:L", Status: loot.GrantSuccess, Attempts: 2}
	d.Put([]loot.Grant{a, b})
	if gs, ok := d.Take([]string{a.No, "S:3:L"}); ok {
		t.Fatalf("Take with a number never put = %v; want no answer (%s)", gs, run)
	}
	if gs, ok := d.Take([]string{b.No, a.No, b.No}); !ok || !slices.Equal(gs, []loot.Grant{b, a, b}) {
		t.Fatalf("Take(b, a, b) = %v, %v; want [b a b] (%s)", gs, ok, run)
	}
	if gs, ok := d.Take([]string{a.No}); ok {
		t.Fatalf("Take after the grants were taken = %v; want no answer (%s)", gs, run)
	}
	d.Put([]loot.Grant{a})
	for i := range Max {
		d.Put([]loot.Grant{{No: fmt.Sprint("F:", i)}})
	}
	if _, ok := d.Take([]string{a.No}); ok {
		t.Fatalf("a grant put before %d more was still held; want Put past Max to start afresh (%s)", Max, run)
	}
}
