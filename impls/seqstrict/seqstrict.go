// Package seqstrict is the row "seq-strict" of the design matrix: the
// per-player monotonic sequence number of source document
// 001_73391d5f79abbe3d.txt, section 1, read strictly: below the expected
// number is a replay, equal is credited, above is buffered until the gap
// fills. The expected number and the buffer live in the player's record
// (package playerstate). Its declaration derives where it fails.
package seqstrict

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// Name is the design's matrix row.
const Name = "seq-strict"

// State is a player's record: the next expected sequence number (0 before
// the first settlement: the sender's first number is 1) and the future
// settlements held for a gap.
type State struct {
	Next   uint64
	Buffer map[uint64]faults.Settlement
}

type rule struct{}

// PerPlayer implements playerstate.Rule: one integer per player, the
// document's claim.
func (rule) PerPlayer() int { return 1 }

// Decide implements playerstate.Rule.
func (rule) Decide(st *State, s faults.Settlement) (playerstate.Verdict, error) {
	if st.Next == 0 {
		st.Next = 1
	}
	size := func() int { return 1 + len(st.Buffer) }
	switch {
	case s.Seq < st.Next:
		return playerstate.Verdict{Dup: true, Size: size()}, nil
	case s.Seq > st.Next:
		// A copy of a held settlement is held again: it is not credited,
		// so "duplicate" would be a false ack.
		if st.Buffer == nil {
			st.Buffer = make(map[uint64]faults.Settlement)
		}
		st.Buffer[s.Seq] = s
		return playerstate.Verdict{Held: true, Size: size()}, nil
	}
	credits := []playerstate.Credit{{S: s, Room: s.Room}}
	st.Next++
	for {
		b, ok := st.Buffer[st.Next]
		if !ok {
			break
		}
		credits = append(credits, playerstate.Credit{S: b, Room: b.Room})
		delete(st.Buffer, st.Next)
		st.Next++
	}
	return playerstate.Verdict{Credits: credits, Size: size()}, nil
}

// Design is the strict sequence design.
var Design = playerstate.Design[State]{
	Row:  Name,
	Rule: rule{},
	Decl: faults.Declaration{
		Doc: "Source 001 section 1: a per-player monotonic sequence number in the player's record. Below the " +
			"expected number is the past, a replay, dropped; equal is the present, credited, and the expectation " +
			"advances, releasing whatever was buffered next; above is the future, buffered until the gap fills. Its " +
			"BoundedState bound is the one integer per player the document claims (\"storage is constant\"). It " +
			"holds where each settlement first arrives in sequence order: everything below the expected number was " +
			"credited and is never forgotten, so copies and replays of any age are caught (duplicate, deep-replay, " +
			"window-expiry), and a settlement is identified by its number, not its content, so a third kind or a " +
			"return to a room is simply the next number (third-kind, room-return). Credits go to the settlement's " +
			"own room: NoCrossRoom holds everywhere.",
		Fails: []faults.Expect{
			{Families: []faults.Family{faults.Families.Late, faults.Families.Interleave}, Props: []faults.Property{faults.Properties.NoBlocking, faults.Properties.BoundedState},
				Why: "with two settlements per match the number no longer marks match boundaries (section 2, " +
					"symmetry breaking): an old match's final arriving after the new match's instant (interleave), or a " +
					"match's instant after its own final (late), makes the number that arrives first the future; it is " +
					"held for a gap that, as far as the sequence knows, may never fill (NoBlocking: a first delivery held " +
					"back), and the buffer breaks the constant-storage claim (BoundedState)"},
			{Families: []faults.Family{faults.Families.Crash, faults.Families.StoreError, faults.Families.SmallScope},
				Props: []faults.Property{faults.Properties.NoLoss, faults.Properties.NoBlocking, faults.Properties.BoundedState, faults.Properties.HonestAck},
				Why: playerstate.LostAfterClaim + "; and the settlement lost or nacked leaves a gap, so every later " +
					"number of the player is held behind it (NoBlocking, BoundedState)"},
			{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: playerstate.Lost,
				Why: playerstate.LostAfterClaim},
			{Families: []faults.Family{faults.Families.MultiNode}, Props: []faults.Property{faults.Properties.NoBlocking, faults.Properties.BoundedState},
				Why: "a claim that fails on one node is retried RetryAfter later; the player's next settlement arrives " +
					"first and is held behind the gap (NoBlocking, BoundedState)"},
			{Families: []faults.Family{faults.Families.Concurrent, faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
				Why: playerstate.EarlyAck("the expected number advanced past it")},
			{Families: []faults.Family{faults.Families.Pause}, Props: []faults.Property{faults.Properties.NoBlocking, faults.Properties.BoundedState, faults.Properties.HonestAck},
				Why: playerstate.FrozenAck("the expected number advanced past it") + "; and a call frozen before its " +
					"claim lets the player's next settlements arrive first: they are held behind the gap (NoBlocking, " +
					"BoundedState), as under multi-node"},
			{Families: []faults.Family{faults.Families.SequenceRewind}, Props: playerstate.Lost,
				Why: "when the sender's counter restarts (the document assumes nobody rewinds it), every new " +
					"settlement is below the expected number, the past, and is dropped uncredited (NoLoss) with a " +
					"false \"duplicate\" ack (HonestAck)"},
		},
	},
}
