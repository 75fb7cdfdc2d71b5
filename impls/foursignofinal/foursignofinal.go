// Package foursignofinal is the row "four-sig-no-final": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// final flag: (room, round, net). It breaks "净额与终局防同局同轮多笔互串": a
// match's instant and final settlement of equal amount share a signature,
// so the final is dropped as a replay of the instant (NoLoss, HonestAck).//
// In the matrix its cells equal four-sig's: four-sig's own false
// duplicates (a re-entered room restarts its rounds) already fail NoLoss in
// every family, which hides this rule's failure there. The schedule that
// isolates it, where four-sig holds and this mutant fails, is in impls
// (TestEachMutantBreaksItsRule).
package foursignofinal

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig without the final flag in the signature.
var Design = foursig.Variant{
	Row:    "four-sig-no-final",
	Rules:  foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldFinal},
	Expect: foursig.Expect(nil),
	Text: "four-sig with signature (room, round, net), no final flag (source 001 section 5: " +
		"\"净额与终局防同局同轮多笔互串\"). A match's instant and final of equal amount share a " +
		"signature, so the final is dropped as a replay of the instant and never credited. " +
		"Its matrix cells equal four-sig's (four-sig already fails NoLoss everywhere); the schedule that isolates its rule is impls TestEachMutantBreaksItsRule.",
}

var _ faults.Design = Design
