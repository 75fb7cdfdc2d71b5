// Package seqstrict is the row "seq-strict" of the design matrix: the
// per-player monotonic sequence number of source document
// 001_73391d5f79abbe3d.txt, section 1 ("单调序号为何是第一直觉"): only the
// expected number counts. Below it is the past: a replay, dropped
// (AckDuplicate). Equal is the present: credit and advance, then release
// whatever was buffered next. Above it is the future: buffer and wait
// (AckHeld) until the gap fills.
//
// The expected number and the buffer live in the player's record (package
// playerstate: one atomic claim, then unkeyed credits). The design states
// what the document sells it for, constant storage ("存储恒定": one integer
// per player), as its BoundedState bound.
//
// Why it fails, as section 2 ("对称性破缺") argues: with two settlements per
// match, an old match's final arrives after the new match's instant
// (interleave), or a match's instant after its final (late). The later
// number is then the future and is held for a gap that, as far as the
// sequence knows, may never fill (NoBlocking: a first delivery held back),
// and the buffer breaks the constant-storage claim (BoundedState). When the
// sender's counter restarts (sequence-rewind, the document's "无人倒带"
// assumption), every new settlement is "the past" and is dropped (NoLoss,
// with a false duplicate ack: HonestAck). Identical deliveries racing on
// several nodes (concurrent) are never both credited (the claim is one
// atomic step), but a copy claimed between another node's claim and its
// credit is acked "duplicate" too early (HonestAck). The claim-then-credit shape fails crash,
// store-error and timeout-after-success (NoLoss, HonestAck; playerstate);
// under crash and store-error the settlement lost or nacked leaves a gap,
// and every later number of the player is held behind it (NoBlocking,
// BoundedState). multi-node: a claim that fails on one node is retried
// RetryAfter later; the player's next settlement arrives first and is held
// (NoBlocking, BoundedState).
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

// Design is the strict sequence design; its verdicts are derived in the package comment.
var Design = playerstate.Design[State]{
	Row:  Name,
	Rule: rule{},
	Expect: faults.Expectation{
		faults.Late:           {faults.NoBlocking, faults.BoundedState},
		faults.Interleave:     {faults.NoBlocking, faults.BoundedState},
		faults.Crash:          {faults.NoLoss, faults.NoBlocking, faults.BoundedState, faults.HonestAck},
		faults.StoreError:     {faults.NoLoss, faults.NoBlocking, faults.BoundedState, faults.HonestAck},
		faults.TimeoutSuccess: {faults.NoLoss, faults.HonestAck},
		faults.MultiNode:      {faults.NoBlocking, faults.BoundedState},
		faults.SequenceRewind: {faults.NoLoss, faults.HonestAck},
		// Node A's claim advances the player's sequence; node B's copy,
		// claimed before A's credit lands, is below it and acked "duplicate".
		faults.Concurrent: {faults.HonestAck},
	},
	Text: "Source 001 section 1: a per-player monotonic sequence; below the expected number is a " +
		"replay (dropped), equal is credited and advances, above is buffered until the gap fills. " +
		"Section 2's symmetry breaking: an old final after the new instant, or an instant after its " +
		"final, is held for a gap that may never fill (NoBlocking) and the buffer breaks its " +
		"constant-storage claim (BoundedState); a sender whose counter restarts has every new " +
		"settlement dropped as the past (NoLoss).",
}
