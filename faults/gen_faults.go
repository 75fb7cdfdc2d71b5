package faults

import (
	"slices"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/engine"
)

// The fault steps: faults on the planned attempts, then what is drawn last
// so that every draw above (and every other family) stays as it was: the
// concurrent interleaving, the sender, crashes inside Recover.

// addFaults draws minN..maxN faults of kinds at effects 0..maxEffect of
// attempts among the planned deliveries, each of which is an attempt, so
// every fault drawn here fires (unless its effect index is past what a
// fail or timeout can hit).
func (g *gen) addFaults(label string, minN, maxN, maxEffect int, kinds ...engine.FaultKind) {
	for range g.draw(minN, maxN, label) {
		g.faults = append(g.faults, engine.Fault{
			Attempt: g.draw(0, len(g.dels)-1, "attempt"),
			Effect:  g.draw(0, maxEffect, "effect"),
			Kind:    kinds[g.draw(0, len(kinds)-1, "kind")],
		})
	}
}

// crashes: 1..4 crashes, before or after effect 0..3 of an attempt among
// the planned ones: 4 effects cover claim, credit, commit and one past the
// last (the lost ack) of a three-effect design.
func (g *gen) crashes() { g.addFaults("crashes", 1, 4, 3, engine.CrashBefore, engine.CrashAfter) }

// storeErrors: 1..4 FailBefore faults at effects 0..3 (as crashes): the
// store or sink refused, nothing happened, the sender retries.
func (g *gen) storeErrors() { g.addFaults("failures", 1, 4, 3, engine.FailBefore) }

// timeouts: 1..4 TimeoutAfter faults at effects 0..3 (as crashes): the
// effect happened, the caller was told it timed out.
func (g *gen) timeouts() { g.addFaults("timeouts", 1, 4, 3, engine.TimeoutAfter) }

// nodeFailures: multi-node's 0..2 failures before the first effect, so
// the sender's retry lands on the next node.
func (g *gen) nodeFailures() { g.addFaults("node-failures", 0, 2, 0, engine.FailBefore) }

// canonicalFaults puts the faults in canonical order; of two faults at one
// point the first drawn wins.
func (g *gen) canonicalFaults() {
	slices.SortStableFunc(g.faults, engine.CompareFaults)
	g.faults = slices.CompactFunc(g.faults, func(a, b engine.Fault) bool { return a.Attempt == b.Attempt && a.Effect == b.Effect })
	if len(g.faults) > 0 {
		g.s.Faults = g.faults
	}
}

// switches draws concurrent's interleaving (Schedule.Switches), after the
// faults so the draws above (and every other family) are unchanged. No
// faults go with it (under RunOptions.Free attempt numbers are not
// deterministic). Values 0..2: a group runs at most 3 goroutines (one per
// node, Nodes <= 3), so larger values only repeat these modulo. Up to 48
// choices: a group of 2..3 copies of one settlement makes about 3 choices
// per attempt (its start and its env calls, ~3 for a three-effect design),
// about 8 per group, so 48 interleave the first 6 groups or so; later
// groups run in the sequential order. Rapid shrinks toward fewer and zero
// switches: the sequential order, where a shrunk counterexample keeps only
// the switches its bug needs.
func (g *gen) switches() {
	sw := rapid.SliceOfN(rapid.IntRange(0, 2), 0, 48).Draw(g.t, "switches")
	if len(sw) > 0 {
		g.s.Switches = sw
	}
}

// sender draws the sender of crash, store-error and timeout: fast (0,
// where rapid shrinks to), slow (genSlowRetryAfter: past every lease) or
// giving up after one send. Drawn after everything else but Recover's
// crashes, so the other draws (and families) are unchanged.
func (g *gen) sender() {
	switch g.draw(0, 2, "sender") {
	case 1:
		g.s.RetryAfter = genSlowRetryAfter
	case 2:
		// One send, no resend at the drain: what a crash or a
		// failure left unfinished, only Recover completes.
		g.s.MaxAttempts, g.s.GiveUp = 1, true
	}
}

// recoverCrashes: crash's 0..1 crash inside Recover: of the first 3
// recovery calls (the rebuilt nodes' and the drain's), at its effect
// 0..3, then the faults in canonical order again.
func (g *gen) recoverCrashes() {
	for range g.draw(0, 1, "recover-crashes") {
		g.s.Faults = append(g.s.Faults, engine.Fault{
			Attempt: engine.Recovery(g.draw(0, 2, "recovery")),
			Effect:  g.draw(0, 3, "effect"),
			Kind:    []engine.FaultKind{engine.CrashBefore, engine.CrashAfter}[g.draw(0, 1, "kind")],
		})
	}
	slices.SortStableFunc(g.s.Faults, engine.CompareFaults)
}
