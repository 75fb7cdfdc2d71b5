package faults

import (
	"cmp"
	"fmt"
	"slices"
)

// WorldRule names a world rule; see CheckWorld.
type WorldRule string

// The world rules, in the order CheckWorld checks them.
const (
	RuleMatchPlace WorldRule = "match-place"  // one room and round per match
	RuleOnePerKind WorldRule = "one-per-kind" // one settlement per kind per match
	RuleFinalFlag  WorldRule = "final-flag"   // instant: false, final: true
	RuleRounds     WorldRule = "rounds"       // 1 on entering a room, +1 while staying
	RuleSeq        WorldRule = "seq"          // 1, 2, 3, ... per player (rewind: restarts at 1)
	RuleReturnGap  WorldRule = "return-gap"   // family rule: no quick room returns outside room-return
)

// WorldError is a schedule outside the world model: the settlement that
// breaks a rule, the rule, and what was expected.
type WorldError struct {
	Settlement int // ID of the offending settlement
	Rule       WorldRule
	Detail     string
}

func (e *WorldError) Error() string {
	return fmt.Sprintf("s%d breaks the world rule %s: %s", e.Settlement, e.Rule, e.Detail)
}

// MinReturnGap is how many matches a player of a schedule of family f plays
// elsewhere before re-entering a room (1 for a family that includes
// room-return: a return right after one match elsewhere is its feature).
//
// Derivation of 2: four-sig keeps a player's last 4 signatures (2
// settlements per match x 2 adjacent matches). A return restarts the round
// at 1, so the new match's (room, round) can equal the old match's, and with
// an equal net the signatures are equal: the old ones must have left the
// window before the new match's first settlement arrives, that is, at least
// 4 newer settlements must have arrived. Two matches elsewhere bring 4 (2
// each; 3 each with a third kind). Late and interleaved arrivals move a
// settlement less than one match (late: before the next match's first
// settlement; interleave: a final after the next match's instant), which
// keeps at least 4 in between as long as only one of them is in play: a late
// instant X of match k still precedes the 4 settlements of k+1 and k+2, and
// an interleaved final of k only competes with finals, after which k+1's
// final, k+2's two and k+3's instant arrive.
//
// Derivation of 3: with late and interleave joined, X (match k's instant)
// can arrive late, after k+1 started, and k+2's final can be interleaved
// after k+3's instant: only k+1's two and k+2's instant arrive between X and
// k+3's instant, 3 < 4, so a return at k+3 with X's net would still meet X.
// One more match elsewhere brings at least 2 more. Change both numbers if the
// window (4), the kinds per match or the late/interleave offsets change.
func MinReturnGap(f Family) int {
	var late, interleave bool
	for _, p := range f.Parts() {
		switch p {
		case RoomReturn:
			return 1
		case Late:
			late = true
		case Interleave:
			interleave = true
		}
	}
	if late && interleave {
		return 3
	}
	return 2
}

// CheckWorld reports the first way s leaves the world model (nil if none),
// as a *WorldError naming the settlement and the rule. It assumes a schedule
// Validate accepts (IDs dense and in order).
//
// The world rules are what the business guarantees about a player's
// settlements, and what a family promises on top. Validate checks that a
// schedule is well formed (what Run needs to be safe); CheckWorld checks that
// it describes a world that can happen, so that a design failing on it has a
// real bug and not a bug of the schedule. Every generator satisfies
// CheckWorld (TestGenSatisfiesTheWorldRules); Parse does not require it, so a
// hand-edited file that breaks it still replays (its verdict is then about a
// world that cannot happen: run CheckWorld before trusting it).
//
// The rules, per player, over the matches present in the schedule (a match
// is present when at least one of its settlements is), ordered by Match id;
// within a match, settlements are ordered by Kind:
//
//  1. RuleMatchPlace: all settlements of one match share Room and Round.
//  2. RuleOnePerKind: a match has at most one settlement of each Kind.
//  3. RuleFinalFlag: an instant has Final false, a final has Final true; a
//     third (or later) kind may have either (the generators draw it).
//  4. RuleRounds: the player's first match has round 1; the next match in the
//     same room has the previous round + 1; a match in another room has round
//     1 (a room change restarts the round, a return to a room too).
//  5. RuleSeq: the sender numbers a player's settlements 1, 2, 3, ... in
//     (Match, Kind) order, without gaps (a gap is a settlement the sender
//     produced and never sent, which an at-least-once sender cannot do).
//     Family rule: in a schedule whose family includes sequence-rewind, the
//     first settlement of a match may restart the numbering at 1.
//  6. RuleReturnGap (a family rule): unless the family includes room-return,
//     a player re-enters a room only after MinReturnGap(f) matches elsewhere,
//     so that a four-signature window no longer holds the old match's
//     signatures (see MinReturnGap).
//
// # What a shrinker must preserve
//
// A shrinker (props.Shrink) that removes settlements or rewrites fields must
// keep CheckWorld(candidate) == nil whenever CheckWorld(original) == nil,
// or its "minimal" counterexample can be a world that never happens (two
// consecutive matches of one room at the same round, a player who starts at
// seq 8). In practice:
//
//   - Dropping settlements keeps rules 1, 2 and 3. It breaks rule 4 when it
//     empties a player's first match or a match between two others, and rule
//     5 unless it drops only a player's last settlements (a gap). Call
//     Renumber on the candidate: it recomputes rounds
//     and sequence numbers from what is left, so rules 4 and 5 hold again.
//   - Dropping a whole match between two others can put a room return closer
//     than MinReturnGap (rule 6); Renumber cannot repair that: check
//     CheckWorld and reject the candidate.
//   - Renumbering players, rooms, matches, rounds and seq by rank (equal
//     values stay equal, order is kept) keeps every rule.
//   - Dropping deliveries or faults, moving times or folding nodes does not
//     touch settlements and keeps every rule.
//
// So: candidate = Renumber(drop(...)); adopt it only if CheckWorld(candidate)
// == nil (when the original passed).
func CheckWorld(s Schedule) error {
	rewind, gap := familyRules(s.Family)
	for _, ids := range byPlayer(s.Settlements) {
		if err := checkPlayer(s.Settlements, ids, rewind, gap); err != nil {
			return err
		}
	}
	return nil
}

// familyRules returns whether f lets seq restart and its MinReturnGap.
func familyRules(f Family) (rewind bool, gap int) {
	return slices.Contains(f.Parts(), SequenceRewind), MinReturnGap(f)
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
	werr := func(st Settlement, rule WorldRule, format string, args ...any) error {
		return &WorldError{Settlement: st.ID, Rule: rule, Detail: fmt.Sprintf("player %d, match %d: ", st.Player, st.Match) + fmt.Sprintf(format, args...)}
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
				return werr(st, RuleMatchPlace, "room %d round %d, but s%d of the same match is in room %d round %d (a match is played in one room, at one round)",
					st.Room, st.Round, first.ID, first.Room, first.Round)
			}
			if st.Kind == prev.Kind {
				return werr(st, RuleOnePerKind, "a second %s settlement (s%d is one): a match settles each kind once", st.Kind, prev.ID)
			}
		}
		// Rule 3.
		switch {
		case st.Kind == KindInstant && st.Final:
			return werr(st, RuleFinalFlag, "an instant settlement with final=true (an instant is settled as the player leaves, before the match ends)")
		case st.Kind == KindFinal && !st.Final:
			return werr(st, RuleFinalFlag, "a final settlement with final=false (a final is settled when the match ends)")
		}
		if newMatch {
			// Rules 4 and 6: between matches.
			want := uint32(1)
			switch {
			case matches == 0:
				if st.Round != 1 {
					return werr(st, RuleRounds, "round %d, but it is the player's first match: want round 1 (a player enters a room at round 1)", st.Round)
				}
			case st.Room == prevRoom:
				want = prev.Round + 1
				if st.Round != want {
					return werr(st, RuleRounds, "round %d in room %d, but the player's previous match %d was in the same room at round %d: want round %d (rounds count up within a room)",
						st.Round, st.Room, prev.Match, prev.Round, want)
				}
			default:
				if st.Round != 1 {
					return werr(st, RuleRounds, "round %d in room %d, but the player's previous match %d was in room %d: want round 1 (a room change restarts the round)",
						st.Round, st.Room, prev.Match, prevRoom)
				}
				if last, ok := lastIn[st.Room]; ok && matches-1-last < gap {
					return werr(st, RuleReturnGap, "the player re-enters room %d after %d match(es) elsewhere; this family wants at least %d (only room-return makes quick returns)",
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
				return werr(st, RuleSeq, "seq %d, but it is the player's first settlement: want seq 1 (the sender numbers from 1)", st.Seq)
			}
		case rewind && newMatch && st.Seq == 1:
			// The sender restarted its counter (sequence-rewind).
		case st.Seq != prev.Seq+1:
			return werr(st, RuleSeq, "seq %d after s%d's seq %d: want seq %d (the sender numbers a player's settlements 1, 2, 3, ... in match and kind order%s)",
				st.Seq, prev.ID, prev.Seq, prev.Seq+1, map[bool]string{true: "; it may restart at 1 at a match", false: ""}[rewind])
		}
		prev = &sts[i]
	}
	return nil
}

// Renumber returns a copy of s whose rounds and sequence numbers are
// recomputed from what s keeps, so that rules 4 and 5 of CheckWorld hold:
// per player, in (Match, Kind) order, the first match gets round 1, the next
// match in the same room the previous round + 1, a match in another room
// round 1; seq counts 1, 2, 3, ... and, in a sequence-rewind schedule,
// starts again at 1 where s restarts (a match whose first settlement's seq is
// not above the previous one's). Rooms, matches, kinds, nets and final flags
// are kept. A shrinker calls it after dropping settlements (see the world
// rules). Renumber of a schedule CheckWorld accepts is that schedule.
func Renumber(s Schedule) Schedule {
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
