package engine

import (
	"fmt"
	"slices"
)

// SampledReplays is how many times TestDesign replays a counterexample of
// a sampled family (World.Sampled): a replay reruns the schedule, and the
// interleaving that failed is the Go runtime's to choose again. 10 tries
// make a failure that shows in one run of two almost surely shown
// (2^-10), and cost ten runs of a shrunk schedule: microseconds each.
const SampledReplays = 10

// isSampled reports whether f, or a part of it, is one of w's sampled
// families.
func (w World[D, S, X]) isSampled(f Family) bool {
	return slices.ContainsFunc(f.Parts(), func(p Family) bool { return slices.Contains(w.Sampled, p) })
}

// replaySampled runs s up to SampledReplays times and returns the first
// run that fails p (ok: one did) and how many of the tries failed it,
// stopping at the first failure unless all is set (to count them all).
func replaySampled[D Design, S, X any](w World[D, S, X], d D, s S, o RunOptions, p Property, all bool) (h History[S, X], r Report, failed, tries int, ok bool) {
	for tries < SampledReplays {
		tries++
		hh := w.Run(d, s, o)
		rr := w.Judge(hh)
		if rr.Outcome(p) != Fails {
			continue
		}
		failed++
		if !ok {
			h, r, ok = hh, rr, true
		}
		if !all {
			break
		}
	}
	if !ok {
		h = w.Run(d, s, o)
		r = w.Judge(h)
	}
	return h, r, failed, tries, ok
}

// sampledNote is what TestDesign says of a sampled family's
// counterexample: how a replay behaves, and how many of its tries
// reproduced it.
func sampledNote(f Family, failed, tries int) string {
	return fmt.Sprintf("%s is a sampled search: the Go runtime interleaves its calls, so a replay of this schedule may need several tries (this one reproduced the failure in %d of %d tries; the saved file replays up to %d times)", f, failed, tries, SampledReplays)
}
