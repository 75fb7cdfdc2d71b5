package faults

import (
	"fmt"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// Epoch is virtual time zero (engine.Epoch). Nothing under test reads the
// wall clock: a schedule's times are offsets from Epoch and designs receive
// now = Epoch+At.
var Epoch = engine.Epoch

// MatchEvery is the virtual time between the starts of a player's matches in
// generated schedules. Designs derive their window ttl from it: a ttl of
// WindowTTL covers the two adjacent matches a late settlement can straddle.
const MatchEvery = time.Second

// WindowTTL is the window ttl designs in impls/ use: 2 adjacent matches x
// MatchEvery, plus half a match of slack for a final that lands after the next
// match started. Generators place "window-expiry" retries beyond it and
// "deep-replay" replays several matches beyond it. Change both together.
const WindowTTL = 2*MatchEvery + MatchEvery/2

// Kind is the business kind of a settlement.
type Kind uint8

const (
	// KindInstant is settled the moment a player leaves a match (final=false).
	KindInstant Kind = iota
	// KindFinal is settled when the match ends, often after the player has
	// started the next match (final=true; net may be negative: a debit).
	KindFinal
	// KindThird is the kind the business adds later (a bonus, a refund): the
	// third settlement per match of the third-kind family.
	KindThird
)

func (k Kind) String() string {
	switch k {
	case KindInstant:
		return "instant"
	case KindFinal:
		return "final"
	case KindThird:
		return "third"
	}
	return fmt.Sprintf("kind%d", uint8(k))
}

// Settlement is one logical credit or debit: the ground truth the harness
// knows. Two distinct settlements may share any subset of the business fields
// (generators make such collisions on purpose, from small value ranges); only
// (Player, Match, Kind) is unique, as in a real game server where the match
// id is the battle's unique id.
type Settlement struct {
	// ID is the harness's identity of the settlement (its index in
	// Schedule.Settlements). It exists so the ledger can attribute a credit;
	// a design must never read it to decide anything.
	ID int

	Player uint32
	Room   uint32 // room the match was played in; rooms are re-entered
	Match  uint64 // unique id of the match instance (battle id)
	Round  uint32 // counts up within a room, starts again in the next room
	Kind   Kind
	Net    int64 // signed amount: negative is a debit
	Final  bool
	Seq    uint64 // sender-assigned per-player sequence number
}

// Ack is what a node answers the sender for one delivery. It is the
// engine's type (the runner reads it), and the values below are defined
// here, with the numbers the engine reads: 0 is the one answer the sender
// retries (engine.Nack); every other value is the world's to name.
type Ack = engine.Ack

const (
	// Nack: not settled (an error, a claim held by another, a refusal). The
	// sender retries later. Returning an error from Deliver is a Nack.
	Nack Ack = 0
	// AckCredited: this delivery credited the settlement, durably.
	AckCredited Ack = 1
	// AckDuplicate: "already delivered": the node claims the credit is
	// durable. HonestAck checks that claim.
	AckDuplicate Ack = 2
	// AckHeld: accepted and acked, but the credit is deferred (buffered until
	// something else arrives). The sender stops retrying. NoBlocking fails a
	// first delivery answered this way.
	AckHeld Ack = 3
)

// Nack is the engine's: a change there makes the lengths below differ,
// and this stops compiling.
var _ [1]struct{} = [1 + Nack - engine.Nack]struct{}{}

// ackName names a settlement answer.
func ackName(a Ack) string {
	switch a {
	case Nack:
		return "nack"
	case AckCredited:
		return "credited"
	case AckDuplicate:
		return "duplicate"
	case AckHeld:
		return "held"
	}
	return fmt.Sprintf("ack%d", uint8(a))
}
