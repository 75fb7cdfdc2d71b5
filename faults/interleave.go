package faults

import "slices"

// interleave runs one concurrent group deterministically: work[w] is the
// items (indexes into items) of goroutine w, one goroutine per node in the
// order of its first item. Only one goroutine runs at a time. A goroutine
// parks before each of its attempts and before every env call (env.point),
// and the scheduler, which alone holds the baton between two parks, resumes
// the one Schedule.Switches chooses among those not done. Every hand-off is
// a channel operation, so the goroutines' memory effects are ordered for the
// race detector as they are for the history: the run is sequential, only
// its order is chosen.
//
// A design that waits inside Deliver for another goroutine's progress
// (holds a Cluster lock across an env call, or spins until a partner
// delivery arrives) deadlocks here; the package doc forbids the first, and
// RunOptions.Free is the way to run the second.
func (r *runner) interleave(items []item, work [][]int, acked []bool) {
	if len(work) == 1 {
		// Nothing to interleave: no goroutine, no choice.
		for _, i := range work[0] {
			acked[i] = r.attempt(items[i])
		}
		return
	}
	wake := make([]chan struct{}, len(work))
	back := make(chan bool) // the running goroutine parked (false) or is done (true)
	for w, mine := range work {
		wake[w] = make(chan struct{})
		e := r.envs[items[mine[0]].node]
		park := func() {
			back <- false
			<-wake[w]
		}
		e.park = park
		go func() {
			<-wake[w]
			for j, i := range mine {
				if j > 0 {
					park()
				}
				acked[i] = r.attempt(items[i])
			}
			e.park = nil
			back <- true
		}()
	}
	runnable := make([]int, len(work))
	for w := range runnable {
		runnable[w] = w
	}
	for len(runnable) > 0 {
		k := 0
		if len(runnable) > 1 {
			k = r.choose(len(runnable))
		}
		wake[runnable[k]] <- struct{}{}
		if <-back {
			runnable = slices.Delete(runnable, k, k+1)
		}
	}
}

// choose makes the run's next scheduling choice among n > 1 runnable
// goroutines: Switches[k] mod n, 0 past the end of Switches.
func (r *runner) choose(n int) int {
	k := r.choices
	r.choices++
	if r.arity != nil {
		*r.arity = append(*r.arity, n)
	}
	if k < len(r.s.Switches) {
		return r.s.Switches[k] % n
	}
	return 0
}
