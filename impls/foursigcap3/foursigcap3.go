// Package foursigcap3 is the row "four-sig-cap3": four-sig (source document
// 001_73391d5f79abbe3d.txt, section 5) with a window of 3 instead of 4,
// breaking the document's "设三，第四笔写入恰好挤掉第一笔防护" ("with three,
// the fourth write evicts exactly the first one's protection"). Its
// declaration derives where it differs from four-sig.
package foursigcap3

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig with capacity 3.
var Design = foursig.Variant{
	Row:   "four-sig-cap3",
	Rules: foursig.Config{Capacity: 3, Fields: foursig.AllFields},
	Decl: foursig.Mutant("four-sig with a window of 3 instead of 4, breaking section 5's \"window = 2 per match x 2 "+
		"adjacent matches = 4, the minimum safe value\". Its verdicts are four-sig's except under duplicate, and "+
		"under room-return, which it holds where four-sig fails: the smaller window has already forgotten the "+
		"returned-to room's signatures when the player comes back two matches later.",
		[]faults.Expect{{Families: []faults.Family{faults.Duplicate}, Props: []faults.Property{faults.NoDup, faults.NoLoss, faults.HonestAck},
			Why: "with two settlements per match, the fourth write (the new match's final) evicts the old match's " +
				"first signature while that match is still within the span a copy can arrive in, and duplicate's " +
				"copies reach into the next-but-one match: the copy is credited again (NoDup); credited again, it " +
				"re-enters the window, where a later return to its room collides with it (NoLoss, HonestAck)"}},
		faults.RoomReturn),
}
