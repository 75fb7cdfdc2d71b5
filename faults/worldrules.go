package faults

import (
	"cmp"
	"fmt"
	"slices"
)

// worldRule names a world rule; see checkWorld.
type worldRule string

// The world rules, in the order checkWorld checks them.
const (
	ruleMatchPlace worldRule = "match-place"  // one room and round per match
	ruleOnePerKind worldRule = "one-per-kind" // one settlement per kind per match
	ruleFinalFlag  worldRule = "final-flag"   // instant: false, final: true
	ruleRounds     worldRule = "rounds"       // 1 on entering a room, +1 while staying
	ruleSeq        worldRule = "seq"          // 1, 2, 3, ... per player (rewind: restarts at 1)
	ruleReturnGap  worldRule = "return-gap"   // family rule: no quick room returns outside room-return
	ruleSent       worldRule = "sent"         // every settlement is delivered at least once
)

// worldError is a schedule outside the world model: the settlement that
// breaks a rule, the rule, and what was expected.
type worldError struct {
	Settlement int // ID of the offending settlement
	Rule       worldRule
	Detail     string
}

func (e *worldError) Error() string {
	return fmt.Sprintf("s%d breaks the world rule %s: %s", e.Settlement, e.Rule, e.Detail)
}

// DefaultReturnGap is the matches a player plays elsewhere before
// re-entering a room, in every family but room-return: a return restarts
// the room's rounds, so the return match can repeat an earlier match's
// (room, round), and two matches apart no per-player state that spans two
// adjacent matches (the business's "2 settlements per match x 2 matches")
// still holds the earlier one. The designs that depend on it check it
// against their own state (impls/foursig); change it only with them.
const DefaultReturnGap = 2

// MinReturnGap is the matches a player of a schedule of family f plays
// elsewhere before re-entering a room: 1 with room-return (a quick return
// is its feature); otherwise DefaultReturnGap, plus one when late and
// interleave are joined: each moves one settlement by less than a match
// (late before the next match's first settlement, interleave a final after
// the next match's instant), so together they can bring an old match's
// settlement one match closer to a return.
func MinReturnGap(f Family) int {
	var late, interleave bool
	for _, p := range f.Parts() {
		switch p {
		case Families.RoomReturn:
			return 1
		case Families.Late:
			late = true
		case Families.Interleave:
			interleave = true
		}
	}
	if late && interleave {
		return DefaultReturnGap + 1
	}
	return DefaultReturnGap
}

// checkWorld reports the first way s leaves the world model (nil if none),
// as a *worldError naming the settlement and the rule (see worldRule: per
// player, one room and round per match, one settlement per kind, final flags,
// rounds counting up within a room and restarting at 1 on entering one,
// seq 1, 2, 3, ..., the family rules of sequence-rewind and MinReturnGap;
// and every settlement delivered at least once). It assumes a schedule validate accepts. Every generator
// satisfies it; parse does not require it, so a hand-edited file still
// replays, but a failure on such a world may be the schedule's, not the
// design's. A shrinker keeps it by dropping, then renumber, then rejecting
// what checkWorld still rejects (a room return brought too close).
func checkWorld(s Schedule) error {
	rewind, gap := familyRules(s.Family)
	for _, ids := range byPlayer(s.Settlements) {
		if err := checkPlayer(s.Settlements, ids, rewind, gap); err != nil {
			return err
		}
	}
	// The sender is at-least-once: what the business produced, it sends.
	sent := make([]bool, len(s.Settlements))
	for _, d := range s.Deliveries {
		sent[d.Msg] = true
	}
	for id, ok := range sent {
		if !ok {
			st := s.Settlements[id]
			return &worldError{Settlement: id, Rule: ruleSent, Detail: fmt.Sprintf("player %d, match %d: no delivery sends it (an at-least-once sender sends every settlement it produces)", st.Player, st.Match)}
		}
	}
	return nil
}

// familyRules returns whether f lets seq restart and its MinReturnGap.
func familyRules(f Family) (rewind bool, gap int) {
	return slices.Contains(f.Parts(), Families.SequenceRewind), MinReturnGap(f)
}

// byPlayer returns the settlement indexes of each player, each list in
// (Match, Kind, ID) order, players in order of their first settlement.
func byPlayer(sts []Settlement) [][]int {
	index := map[uint32]int{}
	var out [][]int
	for i, st := range sts {
		j, ok := index[st.Player]
		if !ok {
			j = len(out)
			index[st.Player] = j
			out = append(out, nil)
		}
		out[j] = append(out[j], i)
	}
	for _, ids := range out {
		slices.SortStableFunc(ids, func(a, b int) int {
			return cmp.Or(cmp.Compare(sts[a].Match, sts[b].Match), cmp.Compare(sts[a].Kind, sts[b].Kind))
		})
	}
	return out
}

func checkPlayer(sts []Settlement, ids []int, rewind bool, gap int) error {
	werr := func(st Settlement, rule worldRule, format string, args ...any) error {
		return &worldError{Settlement: st.ID, Rule: rule, Detail: fmt.Sprintf("player %d, match %d: ", st.Player, st.Match) + fmt.Sprintf(format, args...)}
	}
	var (
		prev     *Settlement // previous settlement of the player
		first    *Settlement // first settlement of the current match
		matches  int         // present matches so far
		lastIn   = map[uint32]int{}
		prevRoom uint32
	)
	for _, i := range ids {
		st := sts[i]
		newMatch := prev == nil || st.Match != prev.Match
		// Rules 1 and 2: within a match.
		if !newMatch {
			if st.Room != first.Room || st.Round != first.Round {
				return werr(st, ruleMatchPlace, "room %d round %d, but s%d of the same match is in room %d round %d (a match is played in one room, at one round)",
					st.Room, st.Round, first.ID, first.Room, first.Round)
			}
			if st.Kind == prev.Kind {
				return werr(st, ruleOnePerKind, "a second %s settlement (s%d is one): a match settles each kind once", st.Kind, prev.ID)
			}
		}
		// Rule 3.
		switch {
		case st.Kind == KindInstant && st.Final:
			return werr(st, ruleFinalFlag, "an instant settlement with final=true (an instant is settled as the player leaves, before the match ends)")
		case st.Kind == KindFinal && !st.Final:
			return werr(st, ruleFinalFlag, "a final settlement with final=false (a final is settled when the match ends)")
		}
		if newMatch {
			// Rules 4 and 6: between matches.
			want := uint32(1)
			switch {
			case matches == 0:
				if st.Round != 1 {
					return werr(st, ruleRounds, "round %d, but it is the player's first match: want round 1 (a player enters a room at round 1)", st.Round)
				}
			case st.Room == prevRoom:
				want = prev.Round + 1
				if st.Round != want {
					return werr(st, ruleRounds, "round %d in room %d, but the player's previous match %d was in the same room at round %d: want round %d (rounds count up within a room)",
						st.Round, st.Room, prev.Match, prev.Round, want)
				}
			default:
				if st.Round != 1 {
					return werr(st, ruleRounds, "round %d in room %d, but the player's previous match %d was in room %d: want round 1 (a room change restarts the round)",
						st.Round, st.Room, prev.Match, prevRoom)
				}
				if last, ok := lastIn[st.Room]; ok && matches-1-last < gap {
					return werr(st, ruleReturnGap, "the player re-enters room %d after %d match(es) elsewhere; this family wants at least %d (only room-return makes quick returns)",
						st.Room, matches-1-last, gap)
				}
			}
			if matches > 0 && st.Room != prevRoom {
				lastIn[prevRoom] = matches - 1
			}
			prevRoom = st.Room
			matches++
			first = &sts[i]
		}
		// Rule 5.
		switch {
		case prev == nil:
			if st.Seq != 1 {
				return werr(st, ruleSeq, "seq %d, but it is the player's first settlement: want seq 1 (the sender numbers from 1)", st.Seq)
			}
		case rewind && newMatch && st.Seq == 1:
			// The sender restarted its counter (sequence-rewind).
		case st.Seq != prev.Seq+1:
			return werr(st, ruleSeq, "seq %d after s%d's seq %d: want seq %d (the sender numbers a player's settlements 1, 2, 3, ... in match and kind order%s)",
				st.Seq, prev.ID, prev.Seq, prev.Seq+1, map[bool]string{true: "; it may restart at 1 at a match", false: ""}[rewind])
		}
		prev = &sts[i]
	}
	return nil
}

// renumber returns a copy of s whose rounds and sequence numbers are
// recomputed from what s keeps, so that rules 4 and 5 of checkWorld hold:
// per player, in (Match, Kind) order, the first match gets round 1, the next
// match in the same room the previous round + 1, a match in another room
// round 1; seq counts 1, 2, 3, ... and, in a sequence-rewind schedule,
// starts again at 1 where s restarts (a match whose first settlement's seq is
// not above the previous one's). Rooms, matches, kinds, nets and final flags
// are kept. A shrinker calls it after dropping settlements (see the world
// rules). renumber of a schedule checkWorld accepts is that schedule.
func renumber(s Schedule) Schedule {
	rewind, _ := familyRules(s.Family)
	orig := s.Settlements
	out := slices.Clone(orig)
	for _, ids := range byPlayer(orig) {
		var prev *Settlement // previous settlement, as in s
		var round uint32
		var seq uint64
		for _, i := range ids {
			st := orig[i]
			if prev == nil || st.Match != prev.Match {
				switch {
				case prev == nil || st.Room != prev.Room:
					round = 1
				default:
					round++
				}
				if rewind && prev != nil && st.Seq <= prev.Seq {
					seq = 0
				}
			}
			seq++
			out[i].Round = round
			out[i].Seq = seq
			prev = &orig[i]
		}
	}
	s.Settlements = out
	return s
}
