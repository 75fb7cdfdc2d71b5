package main

import (
	"fmt"
	"strings"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls"
	"github.com/onceproof/onceproof/props"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// registries are the designs the command knows, per subject.
type registries struct {
	settle impls.Registry[faults.Design]
	loot   impls.Registry[lootfaults.Design]
}

// subject is one world the command runs: its engine World, its designs in
// row order, where its committed results live, and what its matrix.md
// says besides the table.
type subject[D engine.Design, S, X any] struct {
	name    string
	world   engine.World[D, S, X]
	designs []D
	// results is the committed results' directory, from the module root.
	results string
	// intro is matrix.md's paragraph on what the columns ran.
	intro func(n int) string
	// reached is the sentence on what the coverage counts.
	reached string
	// steady folds a design's coverage that varies run to run (nil: none).
	steady func(engine.Coverage) engine.Coverage
}

// find is sub's design named name.
func (sub subject[D, S, X]) find(name string) (D, error) {
	r := impls.Registry[D](sub.designs)
	d, ok := r.ByName(name)
	if ok {
		return d, nil
	}
	return d, badf("unknown %sdesign %q (valid %sdesigns: %s; onceproof list says what each is)", sub.qualifier(), name, sub.qualifier(), strings.Join(r.Names(), ", "))
}

// qualifier is "" for the default subject, "loot " for the other, in
// messages about designs.
func (sub subject[D, S, X]) qualifier() string {
	if sub.name == "settle" {
		return ""
	}
	return sub.name + " "
}

func settleSubject(ds impls.Registry[faults.Design]) subject[faults.Design, faults.Schedule, faults.Detail] {
	return subject[faults.Design, faults.Schedule, faults.Detail]{
		name: "settle", world: props.World, designs: ds, results: "results", steady: faults.Steady,
		intro: func(n int) string {
			_, scope, _ := props.World.Exhaustive(faults.Families.SmallScope)
			return fmt.Sprintf("Every design runs under every fault family, %d generated schedules per cell (the same schedules for every design; long-history, whose schedules are each 40 times larger, runs %d), and, in the small-scope column, every schedule within the scope %s, every interleaving of its concurrent ones included: a small-scope cell that holds holds exhaustively to that scope. ",
				n, faults.World.Runs(faults.Families.LongHistory, n), scope) +
				joinsIntro(props.World, n) +
				"The concurrent column interleaves its goroutines (identical deliveries at once on several nodes) with faults' deterministic scheduler, each schedule's `switches` choosing who runs next, so this file regenerates byte for byte; free-running goroutines under the race detector are checked by `go test -race ./cmd/onceproof` (TestConcurrentFamilyOnRealGoroutines).\n\n"
		},
		reached: "How deep each cell looked is under each design (\"What the runs reached\"): crashes, failures and timeouts injected, crashes inside Recover, credits Recover made, retries that came after a lease, senders that gave up, duplicates answered from memory or by the store, planned copies (far: past the window), arrivals on another node, interleaved attempts, out-of-order arrivals, shared matches, third kinds, sequence restarts, quick room returns, state samples, paused calls, arrivals of a settlement on another node while a call of it was paused. A cell whose runs never reached what its family exists for is *not exercised*, which fails it.\n",
	}
}

func lootSubject(ds impls.Registry[lootfaults.Design]) subject[lootfaults.Design, lootfaults.Schedule, lootfaults.Detail] {
	return subject[lootfaults.Design, lootfaults.Schedule, lootfaults.Detail]{
		name: lootfaults.World.Subject, world: lootprops.World, designs: ds, results: "results/loot",
		intro: func(n int) string {
			var deep []string
			for _, f := range lootfaults.World.Families {
				if lootprops.Deep(f) {
					deep = append(deep, string(f))
				}
			}
			return fmt.Sprintf("Every loot allocation design (source 004) runs under every fault family, %d generated schedules per cell (%d under %s, whose known failures show in one run of several hundred: lootprops.DeepN says which), the same for every design: a team, one or two sessions, requests (open, start, claims, the scheduler's settle, cancels, the compensation job's ticks) delivered at least once to two or three nodes, each node on its own clock, the database and the lock service on theirs. ",
				lootprops.World.Runs(lootfaults.Families.Clean, n), lootprops.World.Runs(lootfaults.Families.ConcurrentSettle, n), strings.Join(deep, ", ")) +
				joinsIntro(lootprops.World, n) +
				"The world reads each design's database after every store call, as an auditor would, and judges the allocation from what it saw, the inventory ledger and the answers given. " +
				"Concurrent groups (concurrent-settle, ties, cancel-race, 20 identical claims at once in duplicate-claim) are interleaved by each schedule's `switches`, so this file regenerates byte for byte.\n\n"
		},
		reached: "How deep each cell looked is under each design (\"What the runs reached\"): crashes (inside Recover too), failures, timeouts and pauses injected, senders that gave up, items Recover delivered, repeated claims, arrivals on another node, interleaved attempts, settles before the deadline, claims within a second of it, calls on skewed nodes, locks taken after their holder's ttl ended, settles stalled past any lock's ttl while another trigger of the session came, cancels, outsiders' claims, ties in one second, sessions of several items, compensation while a settler of a closed session was stalled, claims that changed their player's intent. A cell whose runs never reached what its family exists for is *not exercised*, which fails it.\n",
	}
}

// joinsIntro is the intro's sentence on w's documented joins (none: ""):
// which they are and the schedules a cell of each runs; the list says why
// each is there.
func joinsIntro[D engine.Design, S, X any](w engine.World[D, S, X], n int) string {
	if len(w.Joins) == 0 {
		return ""
	}
	cols := make([]string, len(w.Joins))
	for i, f := range w.Joins {
		cols[i] = fmt.Sprintf("%s (%d schedules)", f, w.Runs(f, n))
	}
	return fmt.Sprintf("The last columns are joined families, each of two or three families whose schedules have every part's features at once (`onceproof list` says what each makes that no part does alone): %s; a design's verdict in one fails what its parts are declared to fail, unless it declares the join itself. ", strings.Join(cols, ", "))
}
