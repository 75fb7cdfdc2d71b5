// Package foursignoroom is the row "four-sig-no-room": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// room: (round, net, final). It breaks "房间防串房": rounds start again in
// every room, so the old room's late final and the new room's settlement of
// the same round and amount share a signature, and whichever comes second is
// dropped as a replay although it was never credited (NoLoss, and its
// duplicate ack is false: HonestAck).
//
// Declared verdicts: four-sig's plus NoLoss and HonestAck in every family:
// a player who leaves a room after round 1 plays the next match at round 1
// too, and with equal amounts the adjacent matches share signatures without
// the room.
package foursignoroom

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig without the room in the signature.
var Design = foursig.Variant{
	Row:    "four-sig-no-room",
	Rules:  foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldRoom},
	Expect: foursig.ExpectEverywhere(faults.NoLoss, faults.HonestAck),
	Text: "four-sig with signature (round, net, final), no room (source 001 section 5: \"房间防串房\"). " +
		"Rounds restart in every room, so a settlement in the new room and the old room's settlement " +
		"of the same round and amount collide; the second is dropped as a replay and never credited.",
}

var _ faults.Design = Design
