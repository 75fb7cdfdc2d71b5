// Package memory is an in-process loot.Store, with an Inventory in the same
// store (exactly once end to end), a Lock with a ttl, a FairnessProvider
// over a table, and a settable Clock to drive them. It is the reference
// store for tests, examples and the proof harness, where "durable" means
// "survives the crash of a node, not of the process". Its times behave like
// SQL's: the store's clock is the one injected (the database's), and times
// are kept in UTC at microsecond precision.
package memory
