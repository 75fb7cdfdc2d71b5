// Package foursignoroom is the row "four-sig-no-room": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// room: (round, net, final). It breaks "房间防串房": rounds start again in
// every room, so the old room's late final and the new room's settlement of
// the same round and amount share a signature, and whichever comes second is
// dropped as a replay although it was never credited (NoLoss, and its
// duplicate ack is false: HonestAck).//
// In the matrix its cells equal four-sig's: four-sig's own false
// duplicates (a re-entered room restarts its rounds) already fail NoLoss in
// every family, which hides this rule's failure there. The schedule that
// isolates it, where four-sig holds and this mutant fails, is in impls
// (TestEachMutantBreaksItsRule).
package foursignoroom

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig without the room in the signature.
var Design = foursig.Variant{
	Row:    "four-sig-no-room",
	Rules:  foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldRoom},
	Expect: foursig.Expect(nil),
	Text: "four-sig with signature (round, net, final), no room (source 001 section 5: \"房间防串房\"). " +
		"Rounds restart in every room, so a settlement in the new room and the old room's settlement " +
		"of the same round and amount collide; the second is dropped as a replay and never credited. " +
		"Its matrix cells equal four-sig's (four-sig already fails NoLoss everywhere); the schedule that isolates its rule is impls TestEachMutantBreaksItsRule.",
}

var _ faults.Design = Design
