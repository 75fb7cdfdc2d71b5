// Package engine is the proof harness without a subject: schedules as a
// Frame of deliveries, faults and sender settings plus a world's ground
// truth; the deterministic runner (Run: virtual time, fault points,
// pauses, the interleaver, budgets, the watchdog); verdicts; shrinking;
// the matrix; the kit (TestDesign); and the renderings. A subject (package
// faults: settlements; package lootfaults: loot allocation) is a World, a
// struct of funcs: it
// supplies the ground truth, the Env its designs see, generators, world
// rules and properties. The repository's DESIGN.md tells the whole story.
package engine
