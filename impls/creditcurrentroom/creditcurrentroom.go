// Package creditcurrentroom is the row "credit-current-room": four-sig
// (source document 001_73391d5f79abbe3d.txt) that credits the room the
// player is in now instead of the settlement's own room. It breaks section
// 3's "签名自带房间身份，旧账记在旧房名下" ("直接记入，串账污染对账"): the
// player's current room is the room of their latest instant settlement, so
// an old match's final arriving after the player's next match (late,
// interleave) is credited to the new room (NoCrossRoom). A debit lands on
// the new room's funds, which the document calls more dangerous than a
// double credit.
//
// Declared verdicts: four-sig's, plus NoCrossRoom in every family. Besides
// late and interleave, four-sig's own false duplicates (a re-entered room's
// signatures, see package foursig) drop instants in every family; a dropped
// instant leaves the player's current room where the previous match was,
// and that match's final is credited there.
package creditcurrentroom

import (
	"slices"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig crediting the player's current room.
var Design = foursig.Variant{
	Row:    "credit-current-room",
	Rules:  foursig.Config{Capacity: foursig.Capacity, Fields: foursig.AllFields, CreditCurrentRoom: true},
	Expect: plusCrossRoom(foursig.Expect(nil)),
	Text: "four-sig crediting the room the player is in now (the room of their latest instant " +
		"settlement), not the settlement's room (source 001 section 3: \"旧账记在旧房名下\"). An old " +
		"match's final that arrives after the player's next match started is credited to the new room; so is " +
		"a final whose instant four-sig dropped as a false duplicate, hence NoCrossRoom in every family.",
}

var _ faults.Design = Design

// plusCrossRoom adds NoCrossRoom to every family of e, in report order.
func plusCrossRoom(e faults.Expectation) faults.Expectation {
	out := faults.Expectation{}
	for _, f := range faults.Families {
		for _, p := range faults.Properties {
			if p == faults.NoCrossRoom || slices.Contains(e[f], p) {
				out[f] = append(out[f], p)
			}
		}
	}
	return out
}
