// Package seqlenient is the row "seq-lenient" of the design matrix: the
// lenient reading of source document 001_73391d5f79abbe3d.txt, section 1's
// monotonic sequence: credit anything above the last number processed and
// move the mark to it; drop everything else as a replay. Nothing is ever
// held, so it never blocks.
//
// The mark lives in the player's record (package playerstate: one atomic
// claim, then an unkeyed credit).
//
// Why it fails, as section 2 says ("宽判漏拦多记"… "前者后到即成过去"): the
// old match's final, whose number is the predecessor of the new match's
// instant, arrives after it (interleave), or an instant after its own final
// (late): it is "the past" and is dropped although it was never credited
// (NoLoss, and the duplicate ack is false: HonestAck). A sender whose counter
// restarts (sequence-rewind) has every later settlement dropped the same
// way; and a claim that fails on one node
// (multi-node) is retried after the player's next settlement moved the mark
// past it. The claim-then-credit shape fails crash, store-error and
// timeout-after-success (NoLoss, HonestAck).
package seqlenient

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// Name is the design's matrix row.
const Name = "seq-lenient"

// State is a player's record: the highest sequence number processed (0:
// none; the sender's first number is 1).
type State struct {
	Last uint64
}

type rule struct{}

// PerPlayer implements playerstate.Rule: one integer per player.
func (rule) PerPlayer() int { return 1 }

// Decide implements playerstate.Rule.
func (rule) Decide(st *State, s faults.Settlement) (playerstate.Verdict, error) {
	if s.Seq <= st.Last {
		return playerstate.Verdict{Dup: true, Size: 1}, nil
	}
	st.Last = s.Seq
	return playerstate.Verdict{Credits: []playerstate.Credit{{S: s, Room: s.Room}}, Size: 1}, nil
}

// lost is the verdict of a settlement dropped as a replay it is not.
var lost = []faults.Property{faults.NoLoss, faults.HonestAck}

// Design is the lenient sequence design; its verdicts are derived in the package comment.
var Design = playerstate.Design[State]{
	Row:  Name,
	Rule: rule{},
	Expect: faults.Expectation{
		faults.Late:           lost,
		faults.Interleave:     lost,
		faults.Crash:          lost,
		faults.StoreError:     lost,
		faults.TimeoutSuccess: lost,
		faults.MultiNode:      lost,
		faults.SequenceRewind: lost,
		// Node A's claim advances the player's sequence; node B's copy,
		// claimed before A's credit lands, is the past and acked "duplicate".
		faults.Concurrent: {faults.HonestAck},
	},
	Text: "Source 001 section 1, lenient: credit anything above the last sequence number processed, " +
		"drop the rest. Never blocks, but section 2's interleaving makes the old match's final (the " +
		"predecessor of the new instant) \"the past\" once the instant is processed, and it is dropped " +
		"uncredited (NoLoss); so is everything after a sender's counter restarts.",
}
