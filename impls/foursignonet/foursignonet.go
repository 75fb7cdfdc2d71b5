// Package foursignonet is the row "four-sig-no-net": four-sig (source
// document 001_73391d5f79abbe3d.txt, section 5) whose signature drops the
// net amount, (room, round, final), breaking "净额与终局防同局同轮多笔互串"
// ("net amount and final flag keep settlements of one match and round
// apart"). Its declaration is four-sig's; its Doc says why.
package foursignonet

import (
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig without the net amount in the signature.
var Design = foursig.Variant{
	Row:   "four-sig-no-net",
	Rules: foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields &^ foursig.FieldNet},
	Decl: foursig.Mutant("four-sig with signature (room, round, final): no net amount (section 5: \"net amount and "+
		"final flag keep settlements of one match and round apart\"). Two settlements of one match and round with "+
		"the same final flag (the third kind beside the instant or the final, or a re-entered room's round) "+
		"share a signature whatever they pay, and the second is dropped (NoLoss, HonestAck). Its verdicts are "+
		"four-sig's: the only generated collision it adds, a third kind with its sibling's final flag and another "+
		"amount, sits in third-kind, which four-sig already fails (for a third kind paying its sibling's amount). "+
		"The schedule that isolates its rule, where four-sig holds and this mutant fails, is impls' "+
		"TestEachMutantBreaksItsRule.", nil),
}
