// Package foursignonet is the row "four-sig-no-net": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// net amount: (room, round, final). It breaks "净额与终局防同局同轮多笔互串":
// two settlements of one match and round with the same final flag (the
// third kind beside the instant or the final, or a re-entered room's round)
// share a signature whatever their amounts, and the second is dropped
// (NoLoss, HonestAck).//
// In the matrix its cells equal four-sig's: four-sig's own false
// duplicates (a re-entered room restarts its rounds) already fail NoLoss in
// every family, which hides this rule's failure there. The schedule that
// isolates it, where four-sig holds and this mutant fails, is in impls
// (TestEachMutantBreaksItsRule).
package foursignonet

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig without the net amount in the signature.
var Design = foursig.Variant{
	Row:    "four-sig-no-net",
	Rules:  foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldNet},
	Expect: foursig.Expect(nil),
	Text: "four-sig with signature (room, round, final), no net amount (source 001 section 5: " +
		"\"净额与终局防同局同轮多笔互串\"). Two settlements of one round with the same final flag collide " +
		"whatever they pay, so the third kind of a match is dropped as a replay of the instant or final. " +
		"Its matrix cells equal four-sig's (four-sig already fails NoLoss everywhere); the schedule that isolates its rule is impls TestEachMutantBreaksItsRule.",
}

var _ faults.Design = Design
