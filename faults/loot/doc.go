// Package lootfaults is the loot allocation world of the onceproof harness
// (source 004): a team and its member snapshot, sessions, requests (open,
// start, claim, settle, cancel, compensate) delivered at least once to
// several nodes, three clocks (each node's, the database's, the lock
// service's), a lock service with ttls and an inventory ledger keyed by
// grant number. Design states a design's duties; World is the
// engine.World value that generates, formats, checks, shrinks and runs its
// schedules; Run plays one; package lootprops judges the runs.
package lootfaults
