package typeflags

import (
	"testing"

	"github.com/onceproof/onceproof/faults"
)

func TestFlagsDescribeOnlyTheCurrentMatch(t *testing.T) {
	var st State
	inst := func(room, round uint32) faults.Settlement {
		return faults.Settlement{Room: room, Round: round, Kind: faults.KindInstant}
	}
	fin := func(room, round uint32) faults.Settlement {
		return faults.Settlement{Room: room, Round: round, Kind: faults.KindFinal, Final: true}
	}
	third := func(room, round uint32) faults.Settlement {
		return faults.Settlement{Room: room, Round: round, Kind: faults.KindThird}
	}
	for i, s := range []struct {
		s   faults.Settlement
		dup bool
		why string
	}{
		{inst(1, 1), false, "first instant"},
		{inst(1, 1), true, "its copy"},
		{fin(1, 1), false, "the final"},
		{third(1, 1), true, "a third kind shares the instant's variable: dropped"},
		{inst(1, 2), false, "next match"},
		{fin(1, 1), false, "an old final starts the flags over: credited again"},
	} {
		v, err := rule{}.Decide(&st, s.s)
		if err != nil || v.Dup != s.dup {
			t.Fatalf("step %d (%s): dup=%v, %v; want dup=%v", i, s.why, v.Dup, err, s.dup)
		}
	}
}
