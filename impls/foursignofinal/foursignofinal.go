// Package foursignofinal is the row "four-sig-no-final": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// final flag, (room, round, net), breaking "净额与终局防同局同轮多笔互串"
// ("net amount and final flag keep settlements of one match and round
// apart"). Its declaration derives where it differs from four-sig.
package foursignofinal

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// Design is four-sig without the final flag in the signature.
var Design = foursig.Variant{
	Row:   "four-sig-no-final",
	Rules: foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldFinal},
	Decl: foursig.Mutant("four-sig with signature (room, round, net): no final flag (section 5: \"net amount and "+
		"final flag keep settlements of one match and round apart\"). Where a match's instant and final pay "+
		"different amounts it is four-sig, and each credit goes to the settlement's own room.",
		[]faults.Expect{{Families: faults.Families, Props: playerstate.Lost,
			Why: "a match's instant and final of equal amount share a signature, so the final is dropped as a replay " +
				"of the instant and never credited (NoLoss), with a false \"duplicate\" ack (HonestAck); in every " +
				"family a match's instant and final often pay the same amount"}}),
}
