// Package foursignofinal is the row "four-sig-no-final": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// final flag: (room, round, net). It breaks "净额与终局防同局同轮多笔互串": a
// match's instant and final settlement of equal amount share a signature,
// so the final is dropped as a replay of the instant (NoLoss, HonestAck).
//
// Declared verdicts: four-sig's plus NoLoss and HonestAck in every family:
// in every family a match's instant and final often pay the same amount.
package foursignofinal

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig without the final flag in the signature.
var Design = foursig.Variant{
	Row:    "four-sig-no-final",
	Rules:  foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldFinal},
	Expect: foursig.ExpectEverywhere(faults.NoLoss, faults.HonestAck),
	Text: "four-sig with signature (room, round, net), no final flag (source 001 section 5: " +
		"\"净额与终局防同局同轮多笔互串\"). A match's instant and final of equal amount share a " +
		"signature, so the final is dropped as a replay of the instant and never credited.",
}

var _ faults.Design = Design
