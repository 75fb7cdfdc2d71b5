// Package creditcurrentroom is the row "credit-current-room": four-sig
// (source document 001_73391d5f79abbe3d.txt) that credits the room the
// player is in now instead of the settlement's own room. It breaks section
// 3's "签名自带房间身份，旧账记在旧房名下" ("直接记入，串账污染对账"): the
// player's current room is the room of their latest instant settlement, so
// an old match's final arriving after the player's next match (late,
// interleave) is credited to the new room (NoCrossRoom). A debit lands on
// the new room's funds, which the document calls more dangerous than a
// double credit.
//
// Declared verdicts: four-sig's, plus NoCrossRoom wherever a settlement can
// arrive when the player's latest instant is in another room: late,
// interleave; multi-node, crash and store-error, whose failed instant is
// retried after its own match's final arrived; deep-replay and
// window-expiry, whose old instant, credited again, moves the player back to
// an old room; room-return. Timeout-after-success and third-kind add none:
// the claim that timed out still moved the room, and a third kind arrives
// after its instant.
package creditcurrentroom

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig crediting the player's current room.
var Design = foursig.Variant{
	Row:   "credit-current-room",
	Rules: foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields, CreditCurrentRoom: true},
	Expect: foursig.Expect(faults.Expectation{
		faults.Late:         {faults.NoCrossRoom},
		faults.Interleave:   {faults.NoCrossRoom},
		faults.MultiNode:    {faults.NoCrossRoom},
		faults.DeepReplay:   {faults.NoDup, faults.NoCrossRoom},
		faults.WindowExpiry: {faults.NoDup, faults.NoLoss, faults.NoCrossRoom, faults.HonestAck},
		faults.Crash:        {faults.NoLoss, faults.NoCrossRoom, faults.HonestAck},
		faults.StoreError:   {faults.NoLoss, faults.NoCrossRoom, faults.HonestAck},
		faults.RoomReturn:   {faults.NoLoss, faults.NoCrossRoom, faults.HonestAck},
	}),
	Text: "four-sig crediting the room the player is in now (the room of their latest instant " +
		"settlement), not the settlement's room (source 001 section 3: \"旧账记在旧房名下\"). An old " +
		"match's final that arrives after the player's next match started is credited to the new room (late, " +
		"interleave, and wherever a retry or replay reorders a player's settlements).",
}

var _ faults.Design = Design
