// Package mysql is a loot.Store and loot.Reader on MySQL or MariaDB
// (InnoDB; tested on MariaDB 10.11; SKIP LOCKED needs MariaDB 10.6 or
// MySQL 8.0), with an Inventory in the same database. It passes
// ref/loot/loottest; loot.Store states the contract, and each method's doc
// here names its statements. The const Schema lists the tables Open
// creates when missing, and why they differ from the source document's.
//
// Every method is one statement or one short transaction of conditional
// writes, never a read followed by a write; "now" is the database's
// NOW(6), in UTC, and it alone judges deadlines and leases. Isolation: the
// store sets none and runs under the server's, REPEATABLE READ by default.
// Its correctness rests on locking reads and conditional UPDATEs (the
// claim reads the session row LOCK IN SHARE MODE, so it serializes with
// the settle CAS's exclusive lock), not on the level: the tests run it
// under REPEATABLE READ and READ COMMITTED (queries.go argues each
// statement).
//
// The caller's duties, beside loot.Service's:
//
//  1. Give the application's account SELECT, INSERT and UPDATE on the
//     database; create the tables from Schema with another account (or let
//     Open create them once with CREATE).
//  2. Keep Options.ClockTable empty outside tests.
//  3. Use one Store per process; Close it at the end.
//
// Where it departs from the source document's SQL (its LootMapper and
// schema.sql, kept verbatim in ref/loot/mysql/docsql), and why:
//
//   - Claims are one INSERT ... SELECT ... ON DUPLICATE KEY UPDATE that
//     judges status, deadline and membership under a shared lock on the
//     session row; the document checks first and upserts after, so a claim
//     can land after settling began.
//   - Times are DATETIME(6): the document's DATETIME ties every claim of a
//     second, and its ORDER BY then leaves the winner to the order the
//     server reads tied rows in (on MariaDB, player id: a later claim wins);
//     ranking here ends on the player id (loot.Ranker), outside SQL.
//   - The settle CAS also takes over an expired settler and bumps a fence;
//     closing, the grants (one multi-row INSERT) and the audit row are one
//     transaction guarded by that fence, instead of grants inserted one by
//     one before a separate markClosed.
//   - grant_no is VARCHAR(160) (session:player:loot reaches 150 bytes), and
//     codes compare byte for byte (NO PAD binary collation).
package mysql
