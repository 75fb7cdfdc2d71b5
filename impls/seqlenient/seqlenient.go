// Package seqlenient is the row "seq-lenient" of the design matrix: the
// monotonic sequence number of source document 001_73391d5f79abbe3d.txt,
// section 1, read leniently: credit anything above the last number
// processed and move the mark to it, drop everything else. The mark lives
// in the player's record (package playerstate). Its declaration derives
// where it fails.
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

// Design is the lenient sequence design.
var Design = playerstate.Design[State]{
	Row:  Name,
	Rule: rule{},
	Decl: faults.Declaration{
		Doc: "Source 001 section 1, read leniently: the player's record keeps a mark, the highest sequence number " +
			"processed; anything above it is credited and moves the mark, anything else is dropped as a replay. " +
			"Nothing is ever held, so it never blocks (NoBlocking), and the mark is one integer (BoundedState). It " +
			"holds where each settlement first arrives in sequence order: a copy or replay of any age is at or below " +
			"the mark (duplicate, deep-replay, window-expiry), and a settlement is identified by its number, not its " +
			"content (third-kind, room-return). Credits go to the settlement's own room: NoCrossRoom holds everywhere.",
		Fails: []faults.Expect{
			{Families: []faults.Family{faults.Families.Late, faults.Families.Interleave}, Props: playerstate.Lost,
				Why: "the old match's final, whose number is the predecessor of the new match's instant, arrives after " +
					"it (interleave), or an instant after its own final (late); as section 2 says, \"the former, " +
					"arriving later, is already the past\": it is dropped although it was never credited (NoLoss), " +
					"and its \"duplicate\" ack is false (HonestAck)"},
			{Families: []faults.Family{faults.Families.Crash, faults.Families.StoreError, faults.Families.TimeoutSuccess, faults.Families.SmallScope}, Props: playerstate.Lost,
				Why: playerstate.LostAfterClaim},
			{Families: []faults.Family{faults.Families.MultiNode}, Props: playerstate.Lost,
				Why: "a claim that fails on one node is retried RetryAfter later, after the player's next settlement " +
					"moved the mark past it: the retry is the past, dropped uncredited (NoLoss) with a false " +
					"\"duplicate\" ack (HonestAck)"},
			{Families: []faults.Family{faults.Families.Concurrent, faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
				Why: playerstate.EarlyAck("the mark moved to it")},
			{Families: []faults.Family{faults.Families.Pause}, Props: playerstate.Lost,
				Why: "a call frozen before its claim is claimed (by its retry on another node, or when it resumes) after " +
					"the player's next settlement moved the mark past it: the past, dropped uncredited (NoLoss) with a " +
					"false \"duplicate\" ack (HonestAck), as under multi-node; " + playerstate.FrozenAck("the mark moved to it")},
			{Families: []faults.Family{faults.Families.SequenceRewind}, Props: playerstate.Lost,
				Why: "when the sender's counter restarts, every later settlement is at or below the mark: dropped " +
					"uncredited as a replay (NoLoss) with a false \"duplicate\" ack (HonestAck)"},
		},
	},
}
