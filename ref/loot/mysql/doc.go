// Package mysql is a loot.Store and loot.Reader on MySQL or MariaDB
// (InnoDB; tested on MariaDB 10.11; SKIP LOCKED needs MariaDB 10.6 or
// MySQL 8.0), with an Inventory in the same database. It passes
// ref/loot/loottest; loot.Store states the contract and each method's doc
// here names its statements. Store says what it rests on (the database's
// clock, locking reads), the caller's duties and where it departs from the
// source document's SQL; the const Schema lists the tables Open creates.
package mysql
