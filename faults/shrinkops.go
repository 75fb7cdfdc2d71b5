package faults

import (
	"slices"

	"github.com/onceproof/onceproof/engine"
)

// The settlement world's parts of shrinking (engine.Shrink runs the rest):
// dropping settlements and renaming what is left, each keeping the world
// one that can happen.

// messagesOf is how the engine names s's settlements: s0, s1, ...
func messagesOf(s Schedule) engine.Messages { return messages(len(s.Settlements)) }

// clone copies s deeply: its frame's slices and its settlements.
func clone(s Schedule) Schedule {
	s.Frame = engine.CloneFrame(s.Frame)
	s.Settlements = slices.Clone(s.Settlements)
	return s
}

// drops is the shrinker's first pass: dropping settlements, with their
// deliveries.
func drops(s Schedule) []engine.Drop[Schedule] {
	return []engine.Drop[Schedule]{{N: len(s.Settlements), Apply: dropSettlements}}
}

func dropSettlements(s Schedule, i, j int) (Schedule, bool) {
	c := clone(s)
	c.Settlements = append(c.Settlements[:i:i], c.Settlements[j:]...)
	for x := range c.Settlements {
		c.Settlements[x].ID = x
	}
	// The deliveries of what is left, with the faults that name one of
	// them (the pause family's) moved along.
	c.Frame = engine.KeepDeliveries(c.Frame, func(d int) bool { m := s.Deliveries[d].Msg; return m < i || m >= j })
	for x := range c.Deliveries {
		if c.Deliveries[x].Msg >= j {
			c.Deliveries[x].Msg -= j - i
		}
	}
	// What is left is renumbered (rounds, sequence numbers) so the world
	// stays one that can happen: no player starting at seq 8, no gap a
	// sequence design would wait on (world rules 4 and 5).
	return renumber(c), len(c.Settlements) > 0
}

// canonical renumbers players, rooms and matches to 1, 2, 3, ... in the
// order of their values (equal values stay equal: a collision is often the
// whole counterexample; order is kept), then recomputes rounds and sequence
// numbers from what is left (renumber). Net amounts are left alone: their
// sign matters. It reports whether anything changed.
func canonical(s Schedule) (Schedule, bool) {
	c := clone(s)
	rank32 := func(get func(*Settlement) *uint32) {
		var vs []uint32
		for i := range c.Settlements {
			vs = append(vs, *get(&c.Settlements[i]))
		}
		slices.Sort(vs)
		vs = slices.Compact(vs)
		for i := range c.Settlements {
			p := get(&c.Settlements[i])
			r, _ := slices.BinarySearch(vs, *p)
			*p = uint32(r + 1)
		}
	}
	rank32(func(x *Settlement) *uint32 { return &x.Player })
	rank32(func(x *Settlement) *uint32 { return &x.Room })
	var ms []uint64
	for _, st := range c.Settlements {
		ms = append(ms, st.Match)
	}
	slices.Sort(ms)
	ms = slices.Compact(ms)
	for i := range c.Settlements {
		r, _ := slices.BinarySearch(ms, c.Settlements[i].Match)
		c.Settlements[i].Match = uint64(r + 1)
	}
	c = renumber(c)
	return c, !slices.Equal(c.Settlements, s.Settlements)
}
