// Package foursignoroom is the row "four-sig-no-room": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// room, (round, net, final), breaking "房间防串房" ("the room prevents
// crediting another room"). Its declaration derives where it differs from
// four-sig.
package foursignoroom

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// Design is four-sig without the room in the signature.
var Design = foursig.Variant{
	Row:   "four-sig-no-room",
	Rules: foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldRoom},
	Decl: foursig.Mutant("four-sig with signature (round, net, final): no room (section 5: \"the room prevents "+
		"crediting another room\"). Where adjacent matches differ in round or "+
		"amount it is four-sig; and the credit still goes to the settlement's own room, so dropping the room from "+
		"the signature loses settlements but never misroutes one.",
		[]faults.Expect{{Families: faults.Families, Props: playerstate.Lost,
			Why: "rounds start again in every room, so the old room's late final and the new room's settlement of " +
				"the same round and amount share a signature, and whichever comes second is dropped as a replay " +
				"although it was never credited (NoLoss), with a false \"duplicate\" ack (HonestAck); in every family " +
				"a player who leaves a room after round 1 plays the next match at round 1 too, and with equal " +
				"amounts the adjacent matches share signatures"}}),
}
