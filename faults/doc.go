// Package faults is the world model of the onceproof harness: settlements,
// deliveries, fault points, schedules as data, generators of schedules for
// each fault family, and the deterministic runner that plays a schedule
// against a Design and records a History.
//
// # Writing a design the runner can judge
//
//  1. Implement Design (Name, NewCluster) and Cluster.NewNode. The Cluster is
//     the durable state (it survives crashes); a Node is memory (a crash
//     discards it; the runner builds a fresh one with NewNode).
//  2. In Node.Deliver, make every durable read or write through
//     Env.Durable(op, fn) and every credit through Env.Credit(grant, s, room).
//     Each such call is an effect, numbered from 0 within the attempt; faults
//     are injected there. Do not hold a lock of the Cluster across an env
//     call: a crash unwinds through it.
//  3. Treat errors from Env as the store or sink does in production: an
//     error wrapping ErrInjected means nothing happened; one wrapping
//     ErrTimeout means the effect happened and you were not told.
//  4. Answer with an Ack: AckCredited after a durable credit, AckDuplicate
//     only when the credit is durable, AckHeld when the credit is deferred,
//     Nack (or an error) to have the sender retry.
//  5. Optionally implement Recoverer (called on a node that replaces a
//     crashed one, and on every node at the drain, far past every lease) and
//     Bounded (the runner samples StateSize against StateBound after every
//     attempt on the node).
//  6. Never read Settlement.ID to decide anything; pass the Settlement you
//     were given (or stored) to Env.Credit, which attributes the credit by it.
//  7. Call Env only from inside Deliver or Recover, on the calling
//     goroutine. In the Concurrent family several nodes run at once, so the
//     Cluster (NewNode included) must be safe for concurrent use; one Node
//     never gets two calls at once. Never wait inside Deliver for another
//     delivery's progress: the deterministic interleaver runs one goroutine
//     at a time and switches only at env calls, so such a wait deadlocks.
//
// The runner does not inject faults into Recover (its effects carry Attempt
// -1), and it cannot stop a design that loops without calling Env.
//
// # What the runner guarantees
//
// Run is a pure function of (design, schedule): virtual time (now = Epoch +
// At), no wall clock, no global randomness; the same schedule twice gives
// the same History. Outside the Concurrent family one goroutine runs
// everything. In it, the deliveries due at one instant run on one goroutine
// per node, but one at a time: each parks before its attempts and before
// every env call, and Schedule.Switches chooses which parked goroutine goes
// on (a race between node A's claim and its credit is one switch to node B
// in between). Only RunOptions.Free, for the race detector, lets them run
// freely, and then the history is not reproducible. The
// sender is at-least-once (see Run): a crash or an error never silently
// removes a settlement from the world.
//
// # The world a schedule describes
//
// Validate says a schedule is well formed (Run needs no more); CheckWorld
// says it is a world that can happen: per player, one room and round per
// match, rounds counting up within a room and restarting at 1 in the next
// (rooms are re-entered), one settlement per kind per match, the final flag
// true for finals and false for instants, seq 1, 2, 3, ... in match order,
// and the family rules (seq restarts only in sequence-rewind; a room is
// re-entered within MinReturnGap matches only in room-return). Every
// generator satisfies it. Parse does not require it, so a hand-edited file
// still replays; a failure on a schedule CheckWorld rejects may be a failure
// of the schedule, not of the design. A shrinker must keep it (CheckWorld
// says how: drop, Renumber, then CheckWorld).
//
// # Reading a History
//
// Events are in the order they happened. Every attempt starts with EvArrive
// (Attempt, Node, Settlement, First, Delivery) and ends with exactly one of:
// EvAck (the sender got the answer; Ack is Nack when Deliver returned an
// error, whose text is in Err), EvCrash (an injected crash inside an effect,
// or with Op "ack" after Deliver returned: the ack is lost), or EvPanic (the
// design panicked), unless the event budget ran out inside it. Between them
// come the attempt's EvEffect, EvCredit and EvFault events: a FailBefore is
// an EvFault alone (the effect did not run); a TimeoutAfter is the effect's
// event then an EvFault; a CrashBefore is an EvCrash alone; a CrashAfter is
// the effect's event then an EvCrash. A crash or panic is followed by EvRecover (Op "recover",
// or "rebuild" for a design without Recover). After the attempt, a Bounded
// node gets an EvState. Effects made by Recover carry Attempt -1 and the
// Settlement they credit (EvCredit) or -1.
//
// EvCredit.Settlement is the ID of the Settlement passed to Env.Credit, not
// necessarily the one being delivered; Applied is false when the ledger
// already held the grant. A keyed credit (non-empty grant) applies once per
// grant; an unkeyed one always applies.
//
// The drain is visible as EvRecover events at the last At + DrainAfter,
// followed by the sender's last resends. EvBudget ends a history whose
// verdict must be Unknown (History.Exhausted): the event budget ran out
// (Settlement -1), or a settlement that arrived was never acked (Settlement
// is its ID; one event per such settlement).
package faults
