// Package typeflags is the row "type-flags" of the design matrix: source
// document 001_73391d5f79abbe3d.txt, section 5, "为什么不用二次结算专用变量"
// ("why not a dedicated variable for the second settlement"): one
// done-variable per settlement kind, describing the player's current
// match. The variables live in the player's record (package playerstate).
// Its declaration derives where it fails.
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

// startsOver derives NoDup wherever a copy can outlive its match.
const startsOver = "the variables only describe the player's current match: a copy of an older match's settlement " +
	"looks like a new match, the flags start over, and it is credited again (NoDup)"

// Design is the per-kind flags design.
var Design = playerstate.Design[State]{
	Row:  Name,
	Rule: rule{},
	Decl: faults.Declaration{
		Doc: "Source 001 section 5, \"why not a dedicated variable for the second settlement\": the player's record " +
			"keeps one done-variable per kind (\"give the second settlement its own variable recording whether it " +
			"was done\") for the player's current match, which the design recognises by its (room, round), the only " +
			"match identity the business fields give it; a settlement of another (room, round) is a new match and the " +
			"flags start over. The variables are those of the two kinds the design knew when it was written: the final " +
			"flag picks one. It holds where a settlement's copies and retries arrive while its match is still the " +
			"player's current one, a late or interleaved first arrival only starting the flags over (clean, late, " +
			"interleave, multi-node, room-return); it reads no sequence number (sequence-rewind); and it credits the " +
			"settlement's own room (NoCrossRoom everywhere).",
		Fails: []faults.Expect{
			{Families: []faults.Family{faults.Families.Duplicate, faults.Families.DeepReplay}, Props: []faults.Property{faults.Properties.NoDup},
				Why: startsOver + "; duplicate's copies reach into the next-but-one match. A deep replay can also meet " +
					"the (room, round) collision of window-expiry; the matrix's budget has not, so it declares NoDup alone"},
			{Families: []faults.Family{faults.Families.WindowExpiry}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
				Why: startsOver + "; and the copies come 2.5 matches later, when the copied match can have the current " +
					"one's (room, round) (a re-entered room restarts its rounds): the copy then sets the current match's " +
					"variable, and the current match's own settlement of that kind is dropped as a replay (NoLoss, HonestAck)"},
			{Families: []faults.Family{faults.Families.Crash, faults.Families.SmallScope}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
				Why: playerstate.LostAfterClaim + "; a crash also reorders: the crashed settlement's retry arrives after " +
					"the player's next settlement of another match started the flags over, so a settlement whose credit " +
					"landed before the crash is credited again (NoDup)"},
			{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
				Why: playerstate.LostAfterClaim + "; and " + playerstate.SlowRetry("the player's next match has started the flags over")},
			{Families: []faults.Family{faults.Families.StoreError}, Props: playerstate.Lost,
				Why: playerstate.LostAfterClaim},
			{Families: []faults.Family{faults.Families.LongHistory}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.NoLoss, faults.Properties.HonestAck},
				Why: startsOver + ": replays come from hundreds of matches back; and a replayed copy whose old (room, " +
					"round) is the current match's sets the current match's variable, so the current match's own " +
					"settlement of that kind is dropped as a replay (NoLoss, HonestAck), as under window-expiry"},
			{Families: []faults.Family{faults.Families.Concurrent, faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
				Why: playerstate.EarlyAck("the kind's done-variable set")},
			{Families: []faults.Family{faults.Families.Pause}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.HonestAck},
				Why: startsOver + ": the late copy comes 35 s (farPause) after its settlement, when newer matches have " +
					"started the flags over, as under deep-replay; and " + playerstate.FrozenAck("the kind's done-variable set")},
			{Families: []faults.Family{faults.Families.ThirdKind}, Props: playerstate.Lost,
				Why: "a third settlement (\"what if a third settlement appears?\") has no variable of its own: it " +
					"shares the instant's or the final's by its final flag and is dropped as a replay of it (NoLoss, " +
					"HonestAck). The structure grows with the business's count of kinds, as the document says"},
		},
	},
}
