// Package foursigcap3 is the row "four-sig-cap3": four-sig (source document
// 001_73391d5f79abbe3d.txt, section 5) with a window of 3 instead of 4. It
// breaks the rule "窗口等于每局两笔乘以相邻两局，等于四，最小安全值。设三，
// 第四笔写入恰好挤掉第一笔防护": with two settlements per match, the fourth
// write (the new match's final) evicts the old match's first signature while
// that match is still within the span a late or replayed copy can arrive in,
// so the copy is credited again (NoDup), as in deep-replay and window-expiry.
//
// Declared verdicts, where they differ from four-sig's: the smaller window
// also forgets sooner the signatures four-sig confuses with a re-entered
// room's (matches A, B, A' with A' = A's room and round): in arrival order,
// A's instant is evicted by B's final before A' instant arrives, and A's
// final by A' instant before A' final arrives, so in-order traffic never
// meets them (clean, duplicate, sequence-rewind, concurrent hold; no false
// duplicate in deep-replay, which keeps its NoDup). Out-of-order traffic
// still does: late, interleave and multi-node retries deliver A' final
// before A' instant, when A's final is still in the window; a third kind
// fills three places per match. Concurrent can reorder a match's instant and
// final too; the matrix's budget did not meet that with a collision, so it
// is declared as observed (holds), and may one day show NoLoss.
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
		faults.Clean:          nil,
		faults.Duplicate:      nil,
		faults.DeepReplay:     {faults.NoDup},
		faults.Concurrent:     nil,
		faults.SequenceRewind: nil,
	}),
	Text: "four-sig with a window of 3 (source 001 section 5: \"设三，第四笔写入恰好挤掉第一笔防护\"). " +
		"Two settlements per match x two adjacent matches need 4 places; with 3, the new match's second " +
		"settlement evicts the old match's first while a late or duplicate copy of it can still arrive, " +
		"and that copy is credited again (pinned by impls TestEachMutantBreaksItsRule; no generated family " +
		"sends such a copy). In the matrix it fails less than four-sig: the smaller window also forgets " +
		"sooner the re-entered room's signatures four-sig confuses, so in-order traffic holds.",
}

var _ faults.Design = Design
