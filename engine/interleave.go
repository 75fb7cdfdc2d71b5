package engine

import (
	"iter"
	"slices"
)

// interleave runs one concurrent group deterministically: work[w] is the
// items (indexes into items) of goroutine w, one goroutine per node in the
// order of its first item. Only one goroutine runs at a time: it holds the
// baton. It parks before each of its attempts but the first, before
// every env call (env.point) and, for an AnswerRacer, before each answer;
// parking is a scheduling choice among the goroutines not done (all of
// them parked but the chooser), made by the baton holder itself, so the
// scheduler's state needs no lock. Choosing
// itself costs nothing; choosing another hands the baton over a channel,
// which also orders the goroutines' memory effects for the race detector
// as they are for the history: the run is sequential, only its order is
// chosen.
//
// A design that waits inside Deliver for another goroutine's progress
// (holds a Cluster lock across an env call, or spins until a partner
// delivery arrives) deadlocks here; the package doc forbids both, and
// RunOptions.Free is the way to run them.
//
// work is never empty: group drops an instant whose every send was a
// retry acked meanwhile before it gets here, since the baton has no
// goroutine to hand to first (next would index an empty runnable list).
func (r *runner[X]) interleave(items []item, work [][]int, acked []bool) {
	if len(work) == 1 {
		// Nothing to interleave: no goroutine, no choice.
		for _, i := range work[0] {
			acked[i], _ = r.attempt(items[i], nil)
		}
		return
	}
	b := &baton{choose: r.choose, wake: make([]chan struct{}, len(work)), runnable: make([]int, len(work)), done: make(chan struct{})}
	var esc escaped
	for w, mine := range work {
		b.wake[w] = make(chan struct{})
		b.runnable[w] = w
		p := r.ports[items[mine[0]].node]
		p.park = func() { b.pass(w, false) }
		go func() {
			defer func() {
				if v := recover(); v != nil {
					// A panic outside Deliver (attempt recovers the
					// design's): the baton holder raised it, so the
					// run's goroutine raises it again, where Run
					// recovers it. The other goroutines stay parked for
					// good: a harness bug leaks them rather than kill
					// the process.
					esc.keep(asHarnessError(v))
					close(b.done)
				}
			}()
			<-b.wake[w]
			for j, i := range mine {
				if j > 0 {
					b.pass(w, false)
				}
				acked[i], _ = r.attempt(items[i], nil)
			}
			p.park = nil
			b.pass(w, true)
		}()
	}
	b.wake[b.next()] <- struct{}{}
	<-b.done
	esc.raise()
}

// baton is the scheduler of one interleaved group. Its fields other than
// wake and done are touched only by the goroutine holding the baton.
type baton struct {
	choose   func(n int) int // the run's next scheduling choice among n
	wake     []chan struct{} // per goroutine: receive the baton
	runnable []int           // goroutines not done, in order
	done     chan struct{}   // closed when every goroutine is done
}

// next makes the scheduling choice: the goroutine to run now.
func (b *baton) next() int {
	k := 0
	if len(b.runnable) > 1 {
		k = b.choose(len(b.runnable))
	}
	return b.runnable[k]
}

// pass is called by goroutine w, holding the baton, at a scheduling point
// (finished: w is done). It hands the baton to the chosen goroutine and,
// unless w is done, waits to get it back; choosing w itself returns at once.
func (b *baton) pass(w int, finished bool) {
	if finished {
		b.runnable = slices.DeleteFunc(b.runnable, func(v int) bool { return v == w })
		if len(b.runnable) == 0 {
			close(b.done)
			return
		}
	}
	next := b.next()
	if next == w {
		return
	}
	b.wake[next] <- struct{}{}
	if !finished {
		<-b.wake[w]
	}
}

// choose makes the run's next scheduling choice among n > 1 runnable
// goroutines: Switches[k] mod n, 0 past the end of Switches.
func (r *runner[X]) choose(n int) int {
	k := r.choices
	r.choices++
	if r.arity != nil {
		*r.arity = append(*r.arity, n)
	}
	if k < len(r.f.Switches) {
		return r.f.Switches[k] % n
	}
	return 0
}

// Interleavings runs s on every interleaving of its same-instant groups
// (Frame.Concurrent; its Switches are ignored), depth first over the
// scheduler's tree of choices, and yields each choice sequence as the
// schedule's Switches with the run's history. run is a world's Run of one
// design, frame its access to a schedule's Frame. Each leaf of the tree is
// one distinct run; a schedule without a choice yields once. Stop early
// by returning false.
func Interleavings[S, H any](s S, frame func(*S) *Frame, run func(S, RunOptions) H, opt RunOptions) iter.Seq2[S, H] {
	return func(yield func(S, H) bool) {
		var explore func(prefix []int) bool
		explore = func(prefix []int) bool {
			s := s
			f := frame(&s)
			f.Switches = nil
			if len(prefix) > 0 {
				f.Switches = slices.Clip(prefix)
			}
			var arity []int
			o := opt
			o.Choices = &arity
			if !yield(s, run(s, o)) {
				return false
			}
			for j := len(prefix); j < len(arity); j++ {
				for v := 1; v < arity[j]; v++ {
					next := append(slices.Clone(prefix), make([]int, j-len(prefix))...)
					if !explore(append(next, v)) {
						return false
					}
				}
			}
			return true
		}
		explore(nil)
	}
}
