package seqstrict

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

func ids(cs []playerstate.Credit) []uint64 {
	var out []uint64
	for _, c := range cs {
		out = append(out, c.S.Seq)
	}
	return out
}

func TestStrictBuffersTheFutureAndFlushesWhenTheGapFills(t *testing.T) {
	var st State
	r := rule{}
	steps := []struct {
		seq       uint64
		dup, held bool
		credits   []uint64
	}{
		{seq: 1, credits: []uint64{1}},
		{seq: 3, held: true},
		{seq: 4, held: true},
		{seq: 3, held: true}, // a copy of a held one is held again, never "duplicate"
		{seq: 2, credits: []uint64{2, 3, 4}},
		{seq: 3, dup: true},
		{seq: 1, dup: true}, // a rewound sender's 1 is "the past"
	}
	for i, s := range steps {
		v, err := r.Decide(&st, faults.Settlement{Player: 1, Seq: s.seq})
		if err != nil {
			t.Fatal(err)
		}
		got := ids(v.Credits)
		if v.Dup != s.dup || v.Held != s.held || len(got) != len(s.credits) {
			t.Fatalf("step %d (seq %d): %+v, want dup=%v held=%v credits=%v", i, s.seq, v, s.dup, s.held, s.credits)
		}
		for j := range got {
			if got[j] != s.credits[j] {
				t.Fatalf("step %d: credits %v, want %v", i, got, s.credits)
			}
		}
	}
	if st.Next != 5 || len(st.Buffer) != 0 {
		t.Fatalf("state %+v, want next 5 and an empty buffer", st)
	}
}
