package lootservice

import (
	"context"
	"fmt"
	"slices"

	"github.com/onceproof/onceproof/engine"
)

// Rerun runs a record again (its workload but the requests it drops, its
// fault plan) and judges it: Replay under a fresh tag, or a fake in tests.
type Rerun func(ctx context.Context, r Record) (Record, []Finding, error)

// ReduceOptions bound a reduction.
type ReduceOptions struct {
	// Repeat is how many times a candidate is rerun before it is given up
	// (0: 3): a real system is not deterministic, so one passing rerun
	// does not show the failure needs what was removed.
	Repeat int
	// Budget bounds the reruns in all, the final Repeat reruns of the
	// reduced record included (0: 60: a few minutes of 2..5 s runs).
	Budget int
	_      struct{}
}

// Reduced is a reduction's result.
type Reduced struct {
	// Record is the last failing rerun of the smallest candidate (the
	// original if no candidate failed).
	Record Record
	// Sessions, Sends and Faults count what was removed.
	Sessions, Sends, Faults int
	// Reruns is how many reruns the reduction took; OutOfBudget says it
	// stopped because Budget ran out, not because nothing more came off.
	Reruns      int
	OutOfBudget bool
	// Reproduced of Of final reruns of Record failed the property.
	Reproduced, Of int
}

// String is the reduction as the report prints it.
func (r Reduced) String() string {
	s := fmt.Sprintf("reduced by %d sessions, %d sends, %d faults in %d reruns; reproduced in %d of %d",
		r.Sessions, r.Sends, r.Faults, r.Reruns, r.Reproduced, r.Of)
	if r.OutOfBudget {
		s += "; the rerun budget ran out before nothing more came off"
	}
	return s
}

// Reduce shrinks failing record r by rerunning it with parts removed:
// each session (all its requests), then each remaining send, then each
// fault of the plan, one at a time, keeping a removal when a rerun fails
// property p in at least one of Repeat tries. It then reruns the result
// Repeat times more and says in how many p failed.
func Reduce(ctx context.Context, r Record, p engine.Property, rerun Rerun, o ReduceOptions) (Reduced, error) {
	if o.Repeat <= 0 {
		o.Repeat = 3
	}
	if o.Budget <= 0 {
		o.Budget = 60
	}
	w, err := r.Workload()
	if err != nil {
		return Reduced{}, err
	}
	red := Reduced{Record: r}
	cur := r
	// try reruns c up to Repeat times; a failing rerun becomes cur. The
	// last Repeat reruns of the budget are kept for the final count.
	try := func(c Record) (bool, error) {
		for range o.Repeat {
			if red.Reruns+o.Repeat >= o.Budget {
				red.OutOfBudget = true
				return false, nil
			}
			red.Reruns++
			got, fs, err := rerun(ctx, c)
			if err != nil {
				return false, err
			}
			if fails(fs, p) {
				cur, red.Record = c, got
				return true, nil
			}
		}
		return false, nil
	}
	// Sessions, then single sends: each candidate drops more requests.
	var groups [][]int
	for x := range w.Schedule.Sessions {
		var g []int
		for i, q := range w.Schedule.Requests {
			if q.Session == x {
				g = append(g, i)
			}
		}
		groups = append(groups, g)
	}
	for _, s := range w.Sends {
		groups = append(groups, []int{s.Request})
	}
	for gi, g := range groups {
		if red.OutOfBudget {
			break
		}
		sent := slices.ContainsFunc(g, func(i int) bool { return !slices.Contains(cur.Run.Drop, i) })
		if !sent {
			continue
		}
		c := cur
		c.Run.Drop = append(slices.Clone(cur.Run.Drop), g...)
		slices.Sort(c.Run.Drop)
		c.Run.Drop = slices.Compact(c.Run.Drop)
		if len(c.Run.Drop) == len(w.Schedule.Requests) {
			continue // nothing would be sent
		}
		ok, err := try(c)
		if err != nil {
			return red, err
		}
		if ok && gi < len(w.Schedule.Sessions) {
			red.Sessions++
		} else if ok {
			red.Sends++
		}
	}
	for i := len(cur.Run.Faults.Faults) - 1; i >= 0 && !red.OutOfBudget; i-- {
		c := cur
		c.Run.Faults.Faults = slices.Delete(slices.Clone(cur.Run.Faults.Faults), i, i+1)
		ok, err := try(c)
		if err != nil {
			return red, err
		}
		if ok {
			red.Faults++
		}
	}
	red.Of = o.Repeat
	for range o.Repeat {
		red.Reruns++
		_, fs, err := rerun(ctx, cur)
		if err != nil {
			return red, err
		}
		if fails(fs, p) {
			red.Reproduced++
		}
	}
	return red, nil
}

// fails reports whether fs fail p.
func fails(fs []Finding, p engine.Property) bool {
	return slices.ContainsFunc(fs, func(f Finding) bool { return f.Property == p && f.Verdict == Failed })
}
