// Package faults is the settlement world of the onceproof harness: what a
// settlement design is given (Env, Settlement) and must answer (Design,
// Cluster, Node, Ack), what it declares (Declaration of Family and
// Property), and World, the engine.World value that generates, formats,
// checks, shrinks and runs its schedules (Schedule: an engine.Frame beside
// the settlements). Run plays one schedule and records a History; package
// props judges it. Package faultstest holds minimal designs for tests.
package faults
