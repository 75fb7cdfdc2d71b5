package props

import (
	"slices"

	"github.com/onceproof/onceproof/faults"
)

// DefaultShrinkBudget is how many candidate schedules Shrink tries when the
// caller gives no budget. A generated schedule has about 50 deliveries, 20
// settlements and a few faults; the chunked passes below need O(n log n)
// tries per pass for n items, about 600 for such a schedule over the three
// passes, and a few rounds of passes reach a fixpoint: 4000 leaves room for
// that while a run of about 100 microseconds keeps a shrink well under a
// second.
const DefaultShrinkBudget = 4000

// Shrink reduces a schedule on which fails is true to a smaller one on which
// it is still true: it drops settlements (with their deliveries), deliveries,
// faults and scheduler choices (Switches), in chunks and then one by one,
// lowers the remaining choices toward 0 (run the first runnable goroutine), folds nodes together,
// renumbers players, rooms, matches, rounds and sequence numbers to small
// values (keeping their order and collisions), moves faults to earlier
// effects, closes time gaps the failure does not need and moves time zero
// to the first delivery. It stops at a fixpoint or after budget candidates
// (DefaultShrinkBudget if budget <= 0).
//
// When s is a world that can happen (faults.CheckWorld), so is every
// candidate Shrink adopts: dropped settlements are renumbered with
// faults.Renumber and a candidate CheckWorld rejects is skipped, so a
// counterexample never rests on a world no sender and no game produce.
//
// Shrink is deterministic: it reads no clock and no randomness, so the same
// schedule and a deterministic fails give the same result every time, which
// is what lets `onceproof matrix` commit its counterexamples. It works on the
// schedule itself, not on a generator's random bits, so it also shrinks a
// schedule that was edited by hand or found by another tool.
func Shrink(s faults.Schedule, fails func(faults.Schedule) bool, budget int) faults.Schedule {
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	k := &shrinker{best: clone(s), fails: fails, budget: budget, world: faults.CheckWorld(s) == nil}
	for k.budget > 0 {
		changed := false
		changed = k.chunks(len(k.best.Settlements), dropSettlements) || changed
		changed = k.chunks(len(k.best.Deliveries), dropDeliveries) || changed
		changed = k.chunks(len(k.best.Deliveries), dropDeliveriesShiftFaults) || changed
		changed = k.chunks(len(k.best.Faults), dropFaults) || changed
		changed = k.chunks(len(k.best.Switches), dropSwitches) || changed
		changed = k.lowerSwitches() || changed
		changed = k.foldNodes() || changed
		changed = k.lowerEffects() || changed
		changed = k.closeGaps() || changed
		changed = k.try(canonical(k.best)) || changed
		changed = k.try(shiftTime(k.best)) || changed
		if !changed {
			break
		}
	}
	return k.best
}

type shrinker struct {
	best   faults.Schedule
	fails  func(faults.Schedule) bool
	budget int
	world  bool // the original is a world that can happen: keep every candidate one
}

// try adopts c if it differs from the best so far, is valid, and still fails.
func (k *shrinker) try(c faults.Schedule, ok bool) bool {
	if !ok || k.budget <= 0 || !valid(c) || (k.world && faults.CheckWorld(c) != nil) {
		return false
	}
	k.budget--
	if !k.fails(c) {
		return false
	}
	k.best = c
	return true
}

// chunks tries drop(best, i, j) for chunks [i, j) of n items, from halves
// down to single items (ddmin without the complement step).
func (k *shrinker) chunks(n int, drop func(faults.Schedule, int, int) (faults.Schedule, bool)) bool {
	changed := false
	if n == 1 { // halving never reaches a single item
		return k.try(drop(k.best, 0, 1))
	}
	for size := n / 2; size >= 1; size /= 2 {
		for i := 0; i+size <= n && k.budget > 0; {
			if k.try(drop(k.best, i, i+size)) {
				n -= size
				changed = true
				continue // the next chunk moved into [i, i+size)
			}
			i += size
		}
		if size == 1 {
			break
		}
	}
	return changed
}

func (k *shrinker) foldNodes() bool {
	changed := false
	for k.best.Nodes > 1 && k.budget > 0 {
		c := clone(k.best)
		last := c.Nodes - 1
		c.Nodes--
		for i := range c.Deliveries {
			if c.Deliveries[i].Node == last {
				c.Deliveries[i].Node = last - 1
			}
		}
		if !k.try(c, true) {
			break
		}
		changed = true
	}
	return changed
}

// lowerSwitches sets each scheduler choice of a concurrent schedule to the
// smallest value that still fails: 0 is "the first runnable goroutine", so
// an all-zero interleaving is the sequential one, and what stays non-zero
// is the race the counterexample needs.
func (k *shrinker) lowerSwitches() bool {
	return k.lowerEach(len(k.best.Switches), func(s *faults.Schedule, i int) *int { return &s.Switches[i] })
}

// lowerEffects moves each fault to the earliest effect of its attempt where
// the schedule still fails: "crash at effect 0" reads better than "crash at
// effect 3" when both lose the ack.
func (k *shrinker) lowerEffects() bool {
	return k.lowerEach(len(k.best.Faults), func(s *faults.Schedule, i int) *int { return &s.Faults[i].Effect })
}

// lowerEach sets the n integers field(s, 0..n-1) of the best schedule, one at
// a time, to the smallest value (counting up from 0) at which the schedule
// still fails.
func (k *shrinker) lowerEach(n int, field func(s *faults.Schedule, i int) *int) bool {
	changed := false
	for i := 0; i < n; i++ {
		for v := 0; v < *field(&k.best, i) && k.budget > 0; v++ {
			c := clone(k.best)
			*field(&c, i) = v
			if k.try(c, true) {
				changed = true
				break
			}
		}
	}
	return changed
}

// closeGaps moves each delivery back to the time of the one before it, when
// the schedule still fails without the wait: what remains of the timing is
// what the counterexample needs (a window expiring, a retry landing late).
func (k *shrinker) closeGaps() bool {
	changed := false
	for i := 1; i < len(k.best.Deliveries) && k.budget > 0; i++ {
		if k.best.Deliveries[i].At == k.best.Deliveries[i-1].At {
			continue
		}
		c := clone(k.best)
		gap := c.Deliveries[i].At - c.Deliveries[i-1].At
		for j := i; j < len(c.Deliveries); j++ {
			c.Deliveries[j].At -= gap
		}
		changed = k.try(c, true) || changed
	}
	return changed
}

func dropSettlements(s faults.Schedule, i, j int) (faults.Schedule, bool) {
	c := clone(s)
	c.Settlements = append(c.Settlements[:i:i], c.Settlements[j:]...)
	for x := range c.Settlements {
		c.Settlements[x].ID = x
	}
	var ds []faults.Delivery
	for _, d := range s.Deliveries {
		switch {
		case d.Settlement < i:
			ds = append(ds, d)
		case d.Settlement >= j:
			d.Settlement -= j - i
			ds = append(ds, d)
		}
	}
	c.Deliveries = ds
	// What is left is renumbered (rounds, sequence numbers) so the world
	// stays one that can happen: no player starting at seq 8, no gap a
	// sequence design would wait on (faults' world rules 4 and 5).
	return faults.Renumber(c), len(c.Settlements) > 0
}

func dropDeliveries(s faults.Schedule, i, j int) (faults.Schedule, bool) {
	c := clone(s)
	c.Deliveries = append(c.Deliveries[:i:i], c.Deliveries[j:]...)
	return c, len(c.Deliveries) > 0
}

// dropDeliveriesShiftFaults drops deliveries [i, j) and moves faults at later
// attempts down by as many: a fault is numbered by attempt, so without the
// shift dropping a delivery moves every later fault onto another attempt.
// (Retries make attempt numbers differ from delivery indices; this is a
// heuristic candidate next to the plain drop, adopted only if it still fails.)
func dropDeliveriesShiftFaults(s faults.Schedule, i, j int) (faults.Schedule, bool) {
	c, ok := dropDeliveries(s, i, j)
	if !ok || len(s.Faults) == 0 {
		return c, false
	}
	var fs []faults.Fault
	for _, f := range s.Faults {
		switch {
		case f.Attempt < i:
			fs = append(fs, f)
		case f.Attempt >= j:
			f.Attempt -= j - i
			fs = append(fs, f)
		}
	}
	c.Faults = fs
	return c, true
}

func dropFaults(s faults.Schedule, i, j int) (faults.Schedule, bool) {
	c := clone(s)
	c.Faults = append(c.Faults[:i:i], c.Faults[j:]...)
	if len(c.Faults) == 0 {
		c.Faults = nil
	}
	return c, true
}

// dropSwitches drops scheduler choices [i, j): later choices move earlier.
func dropSwitches(s faults.Schedule, i, j int) (faults.Schedule, bool) {
	c := clone(s)
	c.Switches = append(c.Switches[:i:i], c.Switches[j:]...)
	if len(c.Switches) == 0 {
		c.Switches = nil
	}
	return c, true
}

// canonical renumbers players, rooms and matches to 1, 2, 3, ... in the
// order of their values (equal values stay equal: a collision is often the
// whole counterexample; order is kept), then recomputes rounds and sequence
// numbers from what is left (faults.Renumber). Net amounts are left alone:
// their sign matters.
func canonical(s faults.Schedule) (faults.Schedule, bool) {
	c := clone(s)
	rank32 := func(get func(*faults.Settlement) *uint32) {
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
	rank32(func(x *faults.Settlement) *uint32 { return &x.Player })
	rank32(func(x *faults.Settlement) *uint32 { return &x.Room })
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
	c = faults.Renumber(c)
	return c, !slices.Equal(c.Settlements, s.Settlements)
}

// shiftTime moves the first delivery to time zero.
func shiftTime(s faults.Schedule) (faults.Schedule, bool) {
	if len(s.Deliveries) == 0 || s.Deliveries[0].At == 0 {
		return s, false
	}
	c := clone(s)
	d0 := c.Deliveries[0].At
	for i := range c.Deliveries {
		c.Deliveries[i].At -= d0
	}
	return c, true
}

// valid is what every candidate keeps: a schedule faults.Validate accepts
// (the runner panics on any other) with something left to deliver.
func valid(s faults.Schedule) bool {
	return len(s.Settlements) > 0 && len(s.Deliveries) > 0 && faults.Validate(s) == nil
}

func clone(s faults.Schedule) faults.Schedule {
	s.Settlements = slices.Clone(s.Settlements)
	s.Deliveries = slices.Clone(s.Deliveries)
	s.Faults = slices.Clone(s.Faults)
	s.Switches = slices.Clone(s.Switches)
	return s
}
