package seqlenient

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
)

func TestLenientDropsEverythingAtOrBelowTheMark(t *testing.T) {
	var st State
	for i, s := range []struct {
		seq uint64
		dup bool
	}{{1, false}, {3, false}, {2, true}, {3, true}, {4, false}, {1, true}} {
		v, err := rule{}.Decide(&st, faults.Settlement{Seq: s.seq})
		if err != nil || v.Dup != s.dup || (len(v.Credits) == 1) == s.dup {
			t.Fatalf("step %d (seq %d): %+v, %v; want dup=%v", i, s.seq, v, err, s.dup)
		}
	}
}
