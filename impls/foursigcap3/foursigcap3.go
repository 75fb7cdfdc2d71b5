// Package foursigcap3 is the row "four-sig-cap3": four-sig (source document
// 001_73391d5f79abbe3d.txt, section 5) with a window of 3 instead of 4. It
// breaks the rule "窗口等于每局两笔乘以相邻两局，等于四，最小安全值。设三，
// 第四笔写入恰好挤掉第一笔防护": with two settlements per match, the fourth
// write (the new match's final) evicts the old match's first signature while
// that match is still within the span a late or replayed copy can arrive in,
// so the copy is credited again (NoDup), as in deep-replay and window-expiry.
//
// Declared verdicts, where they differ from four-sig's: duplicate, whose
// copies reach into the next-but-one match, shows the rule's failure
// (NoDup); the copy, credited again, re-enters the window and a later
// return to its room collides with it (NoLoss, HonestAck). room-return
// holds: the smaller window has already forgotten the returned-to room's
// signatures when the player comes back two matches later.
package foursigcap3

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig with capacity 3.
var Design = foursig.Variant{
	Row:   "four-sig-cap3",
	Rules: foursig.Config{Capacity: 3, Fields: foursig.AllFields},
	Expect: foursig.Expect(faults.Expectation{
		faults.Duplicate:  {faults.NoDup, faults.NoLoss, faults.HonestAck},
		faults.RoomReturn: nil,
	}),
	Text: "four-sig with a window of 3 (source 001 section 5: \"设三，第四笔写入恰好挤掉第一笔防护\"). " +
		"Two settlements per match x two adjacent matches need 4 places; with 3, the new match's second " +
		"settlement evicts the old match's first while a late or duplicate copy of it can still arrive, " +
		"and that copy is credited again (duplicate: NoDup). It holds room-return, which four-sig fails: " +
		"the smaller window has forgotten the room's signatures by the time the player returns.",
}

var _ faults.Design = Design
