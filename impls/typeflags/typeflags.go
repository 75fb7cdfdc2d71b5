// Package typeflags is the row "type-flags" of the design matrix: source
// document 001_73391d5f79abbe3d.txt, "为什么不用二次结算专用变量": one
// done-variable per settlement kind ("给二次结算单独加个变量，记它办过没有").
//
// In the document's version the variables hang on the player and describe
// the player's current match: "instant done", "final done". The design
// recognises "the current match" by its (room, round), the only match
// identity the business fields give it; a settlement of another (room,
// round) means a new match, and the flags start over. The variables are
// indexed by what the design knew when it was written, two kinds: the final
// flag picks the variable (false: the instant's, true: the second
// settlement's).
//
// Why it fails:
//   - third-kind ("如果出现第三次结算呢？"): the third settlement has no
//     variable of its own; it shares the instant's or the final's by its
//     final flag and is dropped as a replay of it (NoLoss, HonestAck). The
//     structure grows with the business's count of kinds, as the document
//     says.
//   - duplicate (copies reach into the next-but-one match), deep-replay,
//     window-expiry: the variables only describe the current
//     match; a copy of an older match's settlement looks like a new match,
//     the flags start over and it is credited again (NoDup). Under
//     window-expiry, whose copies come 2.5 matches later, the copied
//     match can have the current one's (room, round) (a re-entered room
//     restarts its rounds): the copy then sets the current match's variable,
//     and the current match's own settlement of that kind is dropped as a
//     replay (NoLoss, HonestAck). deep-replay can meet the same collision; the
//     matrix's budget has not, so it declares NoDup alone.
//   - the claim-then-credit shape fails crash, store-error and
//     timeout-after-success (NoLoss, HonestAck; package playerstate). A
//     crash also reorders: the crashed settlement's retry arrives after the
//     player's next settlement of another match started the flags over, so
//     a settlement whose credit landed before the crash is credited again
//     (NoDup).
package typeflags

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/playerstate"
)

// Name is the design's matrix row.
const Name = "type-flags"

// State is a player's record: the current match's (room, round) and one
// done-variable per kind the design knows.
type State struct {
	Room, Round uint32
	Started     bool
	InstantDone bool
	FinalDone   bool
}

type rule struct{}

// PerPlayer implements playerstate.Rule: one record per player.
func (rule) PerPlayer() int { return 1 }

// Decide implements playerstate.Rule.
func (rule) Decide(st *State, s faults.Settlement) (playerstate.Verdict, error) {
	if !st.Started || st.Room != s.Room || st.Round != s.Round {
		*st = State{Room: s.Room, Round: s.Round, Started: true}
	}
	done := &st.InstantDone
	if s.Final {
		done = &st.FinalDone
	}
	if *done {
		return playerstate.Verdict{Dup: true, Size: 1}, nil
	}
	*done = true
	return playerstate.Verdict{Credits: []playerstate.Credit{{S: s, Room: s.Room}}, Size: 1}, nil
}

// lost is the verdict of a settlement dropped as a replay it is not.
var lost = []faults.Property{faults.NoLoss, faults.HonestAck}

// Design is the per-kind flags design; its verdicts are derived in the package comment.
var Design = playerstate.Design[State]{
	Row:  Name,
	Rule: rule{},
	Expect: faults.Expectation{
		faults.Duplicate:      {faults.NoDup},
		faults.DeepReplay:     {faults.NoDup},
		faults.WindowExpiry:   {faults.NoDup, faults.NoLoss, faults.HonestAck},
		faults.Crash:          {faults.NoDup, faults.NoLoss, faults.HonestAck},
		faults.StoreError:     lost,
		faults.TimeoutSuccess: lost,
		faults.ThirdKind:      lost,
		// Node A's claim sets the kind's done flag; node B's copy, claimed
		// before A's credit lands, finds it set and acks "duplicate".
		faults.Concurrent: {faults.HonestAck},
	},
	Text: "Source 001, \"为什么不用二次结算专用变量\": one done-variable per kind on the player's " +
		"current match, (room, round). A third kind has no variable and is dropped as a replay of the " +
		"instant or final sharing its flag (NoLoss); the variables only describe the current match, so " +
		"a copy of an older match's settlement starts the flags over and is credited again (NoDup).",
}
