// Package lootfaults is the loot allocation world of the onceproof harness
// (source 004): a team and its member snapshot, sessions, requests (open,
// start, claim, settle, cancel, compensate) delivered at least once to
// several nodes, three clocks (each node's, the database's, the lock
// service's), a lock service with ttls and an inventory ledger keyed by
// grant number. Schedule, its text form (format, parse), generators per
// family (generate), world rules (checkWorld) and Run, which plays a
// schedule against a Design on the engine's runner. Design states a
// design's duties; package lootprops judges the runs.
package lootfaults
