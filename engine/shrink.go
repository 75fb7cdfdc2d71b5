package engine

import (
	"fmt"
	"slices"
)

// DefaultShrinkBudget is how many candidate schedules Shrink tries when the
// caller gives no budget. A generated schedule has about 50 deliveries, 20
// messages and a few faults; the chunked passes below need O(n log n)
// tries per pass for n items, about 600 for such a schedule over the three
// passes, and a few rounds of passes reach a fixpoint: 4000 leaves room for
// that while a run of about 100 microseconds keeps a shrink well under a
// second.
const DefaultShrinkBudget = 4000

// Shrink reduces a schedule on which fails is true to a smaller one on which
// it is still true: it drops the world's ground truth (w.Drops: settlements;
// sessions and requests), faults, deliveries and scheduler choices
// (Switches), in chunks and then one by one, before it shortens anything:
// lowers the remaining choices toward 0 (run the first runnable
// goroutine), folds nodes together, moves faults to earlier effects and
// shortens pauses, closes time gaps the failure does not need, renames what
// is left to small values (w.Canonical) and moves time zero to the first
// delivery. Each round ends with every single removal (Removals) tried
// until none still fails. It stops at a fixpoint, which is then 1-minimal
// (no one item of Removals can go), or after budget candidates
// (DefaultShrinkBudget if budget <= 0).
//
// When s is a world that can happen (w.CheckWorld), so is every candidate
// Shrink adopts: a world's drops make it whole again and a candidate
// CheckWorld rejects is skipped, so a counterexample never rests on a
// world that cannot happen.
//
// Shrink is deterministic: it reads no clock and no randomness, so the same
// schedule and a deterministic fails give the same result every time, which
// is what lets `onceproof matrix` commit its counterexamples. It works on the
// schedule itself, not on a generator's random bits, so it also shrinks a
// schedule that was edited by hand or found by another tool.
func Shrink[D Design, S, X any](w World[D, S, X], s S, fails func(S) bool, budget int) S {
	w = w.Complete()
	if budget <= 0 {
		budget = DefaultShrinkBudget
	}
	k := &shrinker[D, S, X]{w: w, best: w.Clone(s), fails: fails, budget: budget, world: w.CheckWorld(s) == nil}
	for k.budget > 0 {
		changed := false
		// Each pass is skipped once the budget is spent: try adopts
		// nothing then, and building a pass's candidates is itself work
		// (every single removal of a 100,000-settlement schedule is
		// 100,000 copies of it).
		pass := func(p func() bool) {
			if k.budget > 0 {
				changed = p() || changed
			}
		}
		for i := range w.Drops(k.best) {
			// The passes are asked for again each time: a drop changes how
			// many items the next pass has.
			pass(func() bool { d := w.Drops(k.best)[i]; return k.chunks(d.N, d.Apply) })
		}
		pass(func() bool { return k.chunks(len(k.frame().Faults), k.dropFaults) })
		pass(func() bool { return k.chunks(len(k.frame().Outages), k.dropOutages) })
		pass(func() bool { return k.chunks(len(k.frame().Deliveries), k.dropDeliveries) })
		pass(func() bool { return k.chunks(len(k.frame().Deliveries), k.dropDeliveriesShiftFaults) })
		pass(func() bool { return k.chunks(len(k.frame().Switches), k.dropSwitches) })
		pass(k.lowerSwitches)
		pass(k.foldNodes)
		pass(k.lowerEffects)
		pass(k.shortenPauses)
		pass(k.shortenOutages)
		pass(k.closeGaps)
		pass(func() bool { return k.try(w.Canonical(k.best)) })
		pass(func() bool { return k.try(k.shiftTime(k.best)) })
		// Last, every single removal (Removals) until none still fails:
		// the chunked passes try each item once, and a later pass (a
		// fault moved, a settlement renamed) can free one they kept.
		// Each adoption makes the schedule smaller, so this ends; what
		// Shrink returns is 1-minimal unless the budget ran out.
		for k.budget > 0 && k.removals(func(_ string, c S, ok bool) bool { return k.try(c, ok) }) {
			changed = true
		}
		if !changed {
			break
		}
	}
	return k.best
}

type shrinker[D Design, S, X any] struct {
	w      World[D, S, X]
	best   S
	fails  func(S) bool
	budget int
	world  bool // the original is a world that can happen: keep every candidate one
}

func (k *shrinker[D, S, X]) frame() *Frame { return k.w.Frame(&k.best) }

// clone is a deep copy of the best schedule, to change through its frame.
func (k *shrinker[D, S, X]) clone() *S {
	c := k.w.Clone(k.best)
	return &c
}

// try adopts c if it differs from the best so far, is valid, and still fails.
func (k *shrinker[D, S, X]) try(c S, ok bool) bool {
	if !ok || k.budget <= 0 || !k.adoptable(c) {
		return false
	}
	k.budget--
	if !k.fails(c) {
		return false
	}
	k.best = c
	return true
}

// adoptable is what every candidate keeps: valid, and a world that can
// happen when the original was one.
func (k *shrinker[D, S, X]) adoptable(c S) bool {
	return k.valid(c) && (!k.world || k.w.CheckWorld(c) == nil)
}

// valid is what every candidate keeps: a schedule Validate accepts (the
// runner panics on any other) with something left to deliver.
func (k *shrinker[D, S, X]) valid(c S) bool {
	return len(k.w.Frame(&c).Deliveries) > 0 && k.w.Validate(c) == nil
}

// chunks tries drop(best, i, j) for chunks [i, j) of n items, from halves
// down to single items (ddmin without the complement step).
func (k *shrinker[D, S, X]) chunks(n int, drop func(S, int, int) (S, bool)) bool {
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

func (k *shrinker[D, S, X]) foldNodes() bool {
	changed := false
	for k.frame().Nodes > 1 && k.budget > 0 {
		c := k.clone()
		f := k.w.Frame(c)
		last := f.Nodes - 1
		f.Nodes--
		for i := range f.Deliveries {
			if f.Deliveries[i].Node == last {
				f.Deliveries[i].Node = last - 1
			}
		}
		if !k.try(*c, true) {
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
func (k *shrinker[D, S, X]) lowerSwitches() bool {
	return k.lowerEach(len(k.frame().Switches), func(f *Frame, i int) *int { return &f.Switches[i] })
}

// lowerEffects moves each fault to the earliest effect of its attempt where
// the schedule still fails: "crash at effect 0" reads better than "crash at
// effect 3" when both lose the ack.
func (k *shrinker[D, S, X]) lowerEffects() bool {
	return k.lowerEach(len(k.frame().Faults), func(f *Frame, i int) *int { return &f.Faults[i].Effect })
}

// lowerEach sets the n integers field(frame, 0..n-1) of the best schedule,
// one at a time, to the smallest value (counting up from 0) at which the
// schedule still fails.
func (k *shrinker[D, S, X]) lowerEach(n int, field func(f *Frame, i int) *int) bool {
	changed := false
	for i := 0; i < n; i++ {
		for v := 0; v < *field(k.frame(), i) && k.budget > 0; v++ {
			c := k.clone()
			*field(k.w.Frame(c), i) = v
			if k.try(*c, true) {
				changed = true
				break
			}
		}
	}
	return changed
}

// shortenPauses halves each pause while the schedule still fails: what is
// left is about as long as the failure needs (past a lease, a ttl).
func (k *shrinker[D, S, X]) shortenPauses() bool {
	changed := false
	for i := range k.frame().Faults {
		for k.frame().Faults[i].Kind == Pause && k.budget > 0 {
			c := k.clone()
			f := k.w.Frame(c)
			f.Faults[i].For /= 2
			if f.Faults[i].For <= 0 || !k.try(*c, true) {
				break
			}
			changed = true
		}
	}
	return changed
}

// closeGaps moves each delivery back to the time of the one before it, when
// the schedule still fails without the wait: what remains of the timing is
// what the counterexample needs (a window expiring, a retry landing late).
func (k *shrinker[D, S, X]) closeGaps() bool {
	changed := false
	for i := 1; i < len(k.frame().Deliveries) && k.budget > 0; i++ {
		if ds := k.frame().Deliveries; ds[i].At == ds[i-1].At {
			continue
		}
		c := k.clone()
		f := k.w.Frame(c)
		gap := f.Deliveries[i].At - f.Deliveries[i-1].At
		for j := i; j < len(f.Deliveries); j++ {
			f.Deliveries[j].At -= gap
		}
		changed = k.try(*c, true) || changed
	}
	return changed
}

func (k *shrinker[D, S, X]) dropDeliveries(s S, i, j int) (S, bool) {
	c := k.w.Clone(s)
	f := k.w.Frame(&c)
	f.Deliveries = append(f.Deliveries[:i:i], f.Deliveries[j:]...)
	f.Faults = followDeliveries(f.Faults, i, j)
	return c, len(f.Deliveries) > 0
}

// followDeliveries keeps the faults that target a planned delivery on it
// when deliveries [i, j) are dropped: theirs go, later ones move down.
// Faults numbered by attempt are returned as they are (the same slice
// when none targets a delivery).
func followDeliveries(fs []Fault, i, j int) []Fault {
	return followKept(fs, func(d int) bool { return d < i || d >= j })
}

// followKept is followDeliveries for any set of kept deliveries.
func followKept(fs []Fault, kept func(d int) bool) []Fault {
	if !slices.ContainsFunc(fs, func(f Fault) bool { return f.OnDelivery }) {
		return fs
	}
	var out []Fault
	shift, upTo := 0, 0 // dropped deliveries below upTo
	for _, f := range fs {
		if !f.OnDelivery {
			out = append(out, f)
			continue
		}
		for ; upTo < f.Attempt; upTo++ {
			if !kept(upTo) {
				shift++
			}
		}
		if kept(f.Attempt) {
			f.Attempt -= shift
			out = append(out, f)
		}
	}
	return out
}

// KeepDeliveries returns f with the planned deliveries kept says (by
// index) and the faults that target them moved along (those on a dropped
// delivery go): a world's shrinking pass that drops messages with their
// deliveries keeps its faults on theirs.
func KeepDeliveries(f Frame, kept func(d int) bool) Frame {
	var ds []Delivery
	for i, d := range f.Deliveries {
		if kept(i) {
			ds = append(ds, d)
		}
	}
	f.Faults = followKept(f.Faults, kept)
	f.Deliveries = ds
	return f
}

func (k *shrinker[D, S, X]) dropDeliveriesShiftFaults(s S, i, j int) (S, bool) {
	c, ok := k.dropDeliveries(s, i, j)
	if !ok || len(k.w.Frame(&s).Faults) == 0 {
		return c, false
	}
	var fs []Fault
	for _, f := range followDeliveries(k.w.Frame(&s).Faults, i, j) {
		switch {
		case f.OnDelivery || f.Attempt < i:
			fs = append(fs, f)
		case f.Attempt >= j:
			f.Attempt -= j - i
			fs = append(fs, f)
		}
	}
	k.w.Frame(&c).Faults = fs
	return c, true
}

func (k *shrinker[D, S, X]) dropOutages(s S, i, j int) (S, bool) {
	c := k.w.Clone(s)
	return c, dropOutages(k.w.Frame(&c), i, j)
}

// shortenOutages halves each outage's calls while the schedule still
// fails: a shrunk counterexample shows the shortest run of failures
// (within a factor of 2) its bug needs.
func (k *shrinker[D, S, X]) shortenOutages() bool {
	changed := false
	for i := range k.frame().Outages {
		for k.frame().Outages[i].Calls > 1 && k.budget > 0 {
			c := k.clone()
			f := k.w.Frame(c)
			f.Outages = slices.Clone(f.Outages)
			f.Outages[i].Calls /= 2
			if !k.try(*c, true) {
				break
			}
			changed = true
		}
	}
	return changed
}

func (k *shrinker[D, S, X]) dropFaults(s S, i, j int) (S, bool) {
	c := k.w.Clone(s)
	f := k.w.Frame(&c)
	f.Faults = append(f.Faults[:i:i], f.Faults[j:]...)
	if len(f.Faults) == 0 {
		f.Faults = nil
	}
	return c, true
}

// dropSwitches drops scheduler choices [i, j): later choices move earlier.
func (k *shrinker[D, S, X]) dropSwitches(s S, i, j int) (S, bool) {
	c := k.w.Clone(s)
	f := k.w.Frame(&c)
	f.Switches = append(f.Switches[:i:i], f.Switches[j:]...)
	if len(f.Switches) == 0 {
		f.Switches = nil
	}
	return c, true
}

// shiftTime moves the first delivery to time zero.
func (k *shrinker[D, S, X]) shiftTime(s S) (S, bool) {
	if ds := k.w.Frame(&s).Deliveries; len(ds) == 0 || ds[0].At == 0 {
		return s, false
	}
	c := k.w.Clone(s)
	f := k.w.Frame(&c)
	d0 := f.Deliveries[0].At
	for i := range f.Deliveries {
		f.Deliveries[i].At -= d0
	}
	return c, true
}

// Removal is one schedule a 1-minimal counterexample must not fail the
// same way: the schedule less one item (What names it).
type Removal[S any] struct {
	What     string
	Schedule S
}

// Removals lists every schedule that is s less one item: each item of the
// world's ground truth (w.Drops, one at a time, the world made whole),
// each planned delivery (the faults on it going with it; once more with
// the attempt-numbered faults after it moved down, since a dropped
// delivery may have been the attempt they were numbered past), and each
// fault. Only candidates Shrink could adopt are listed: valid, something
// left to deliver, and, when s is a world that can happen (w.CheckWorld),
// one too. A counterexample is 1-minimal when it fails the same way on
// none of them; Shrink ends at such a schedule unless its budget ran out.
func Removals[D Design, S, X any](w World[D, S, X], s S) []Removal[S] {
	w = w.Complete()
	k := &shrinker[D, S, X]{w: w, best: w.Clone(s), world: w.CheckWorld(s) == nil}
	var out []Removal[S]
	k.removals(func(what string, c S, ok bool) bool {
		if ok && k.adoptable(c) {
			out = append(out, Removal[S]{what, c})
		}
		return false
	})
	return out
}

// spent reports whether Shrink's budget is spent: no candidate is adopted
// any more, so none need be built (Removals, which has no budget, builds
// them all).
func (k *shrinker[D, S, X]) spent() bool { return k.fails != nil && k.budget <= 0 }

// removals calls try with every single removal from the best schedule, in
// Removals' order, until try adopts one (true): then it stops, since the
// items have moved.
func (k *shrinker[D, S, X]) removals(try func(what string, c S, ok bool) bool) bool {
	for p, d := range k.w.Drops(k.best) {
		for i := range d.N {
			if k.spent() {
				return false
			}
			what := fmt.Sprintf("item %d of ground truth pass %d", i, p)
			c, ok := d.Apply(k.best, i, i+1)
			if try(what, c, ok) {
				return true
			}
			if c, ok := k.shiftAttempts(c, ok); ok && try(what+", later attempts' faults moved down", c, ok) {
				return true
			}
		}
	}
	f := k.frame()
	for i := range f.Deliveries {
		if k.spent() {
			return false
		}
		if c, ok := k.dropDeliveries(k.best, i, i+1); try(fmt.Sprintf("delivery %d", i), c, ok) {
			return true
		}
		if c, ok := k.dropDeliveriesShiftFaults(k.best, i, i+1); try(fmt.Sprintf("delivery %d, later attempts' faults moved down", i), c, ok) {
			return true
		}
	}
	for i, x := range f.Faults {
		if c, ok := k.dropFaults(k.best, i, i+1); try(fmt.Sprintf("fault %d (%s %s)", i, x.Point(), x.Kind), c, ok) {
			return true
		}
	}
	for i, o := range f.Outages {
		if c, ok := k.dropOutages(k.best, i, i+1); try(fmt.Sprintf("outage %d (%s)", i, o), c, ok) {
			return true
		}
	}
	return false
}

// shiftAttempts is candidate c of a ground-truth drop with every
// attempt-numbered fault past the dropped deliveries moved down by their
// number: a fault on the 8th attempt of 8 settlements, one attempt each,
// is on the 7th once one of the first seven goes. A world's drop keeps
// attempt numbers as they are (right when what goes comes after the
// fault); this is the other half (right when it comes before). Which
// faults a retry or a drop in the middle should move only a run could
// tell; the shrinker tries both and keeps what still fails. False when
// no fault moves.
func (k *shrinker[D, S, X]) shiftAttempts(c S, ok bool) (S, bool) {
	n := len(k.frame().Deliveries) - len(k.w.Frame(&c).Deliveries)
	if !ok || n <= 0 {
		return c, false
	}
	moved := false
	f := k.w.Frame(&c)
	f.Faults = slices.Clone(f.Faults)
	for i := range f.Faults {
		if x := &f.Faults[i]; !x.OnDelivery && x.Attempt >= n {
			x.Attempt -= n
			moved = true
		}
	}
	return c, moved
}

// CloneFrame copies f's slices, for a world's Clone.
func CloneFrame(f Frame) Frame {
	f.Deliveries = slices.Clone(f.Deliveries)
	f.Faults = slices.Clone(f.Faults)
	f.Switches = slices.Clone(f.Switches)
	return f
}
