// Package loot is onceproof's loot allocation reference: a team's drop of N
// items goes to the top N claims exactly once, by a recorded rule, and the
// result can be replayed later. It follows its source document (a loot
// allocation design, "multi-player loot allocation: state machine,
// concurrent idempotency and audit"): sessions OPEN -> CLAIMING -> SETTLING
// -> CLOSED or CANCELED, NEED/GREED/PASS claims, a settle CAS, grants keyed
// session:player:loot, an audit snapshot. The Store is the one authority
// and judges every time by its own clock; Lock, Inventory and
// FairnessProvider are the other effects. ref/loot/memory holds the
// in-process store; ref/loot/loottest is the suite every store must pass.
//
// The caller's duties:
//
//  1. Build one Service per process with New; every process shares the Store.
//  2. Open a session per shared drop (team snapshot, deadline as an instant
//     the database's clock will judge) and StartClaiming when it is shown.
//  3. Claim with the Caller your authentication established, never with a
//     player id or score from the request body.
//  4. Settle from the server (a scheduler at the deadline), never on a
//     player's request. ErrNotDue: later; ErrAlreadySettling/Settled: done.
//  5. Run Recover at start and periodically on every node: it settles
//     overdue and stalled sessions and delivers PENDING grants.
//  6. Make the Inventory idempotent by grant number; its errors are unknown.
//  7. Give the application's database role SELECT, INSERT, UPDATE only.
//
// Where this package departs from the source document, and why (each has a
// test that breaks a model of the document's logic, departures_test.go):
//
//   - A claim's status, deadline and membership are checked in its write,
//     not before it, so no claim lands after settling began or from outside.
//   - Deadlines and leases are judged by the database's clock alone; times
//     are kept in UTC at microseconds (DATETIME's seconds make ties).
//   - The claimant comes from the Caller and fairness from the server.
//   - Ranking ends on player id, a total order; the document's cold-start
//     fixes (8.3) are rule versions beside its own rule.
//   - A stalled settler's session is taken over after its lease, under a
//     new fence that refuses the old settler's write.
//   - Closing, the grants and the snapshot are one write, and Cancel is only
//     possible before it: a canceled session never has a grant to deliver.
//   - The lock is released by compare-and-delete; compensation is leased,
//     backs off, and delivers through the recorded grant number.
package loot
