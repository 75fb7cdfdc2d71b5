// Package postgres is loot.Store (and loot.Reader) on PostgreSQL with pgx,
// and a loot.Inventory in the same database: exactly once from the settle
// CAS to the item, for any number of nodes on one database. It passes
// ref/loot/loottest; loot.Store states the contract, Store how this one
// keeps it and the caller's duties, Schema the tables, and Open how to use
// it.
package postgres
