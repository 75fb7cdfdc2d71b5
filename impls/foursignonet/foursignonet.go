// Package foursignonet is the row "four-sig-no-net": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// net amount: (room, round, final). It breaks "净额与终局防同局同轮多笔互串":
// two settlements of one match and round with the same final flag (the
// third kind beside the instant or the final, or a re-entered room's round)
// share a signature whatever their amounts, and the second is dropped
// (NoLoss, HonestAck).
//
// In the matrix its cells equal four-sig's: the only generated collision it
// adds, a third kind with its sibling's final flag and another amount, sits
// in third-kind, which four-sig already fails (a third kind paying its
// sibling's amount). The schedule that isolates its rule, where four-sig
// holds and this mutant fails, is in impls (TestEachMutantBreaksItsRule).
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
		"Its matrix cells equal four-sig's (third-kind already fails there); the schedule that " +
		"isolates its rule is impls TestEachMutantBreaksItsRule.",
}

var _ faults.Design = Design
