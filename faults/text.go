package faults

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// The text form of a Schedule (format writes it, parse reads it) is the
// engine's (engine.FormatFrame) with one directive of the settlement
// world's, settle, declaring the settlements in ID order (s0, s1, ...)
// before the deliveries that name them:
//
//	family late
//	nodes 1
//	retry 250ms
//	max-attempts 16
//	settle s0 player=1 room=2 match=1 round=1 kind=instant net=-10 final=false seq=1
//	deliver at=250ms s0 node=0
//	fault attempt=4 effect=1 crash-after
//
// Named fields may come in any order.

// textForm is the settlement world's part of the shared lines: no subject
// prefix (the default subject), settlements named s0, s1, ...
var textForm = engine.TextForm{Messages: messages(0), CheckFamily: checkFamily}

// format renders s in the text form parse reads back: parse(format(s))
// equals s for every valid s.
func format(s Schedule) string {
	var b strings.Builder
	b.Grow(96 * len(s.Settlements))
	if len(s.Settlements) > 0 {
		b.WriteString("\n# settlements: the ground truth (sN is settlement N)\n")
	}
	for _, st := range s.Settlements {
		fmt.Fprintf(&b, "settle s%d player=%d room=%d match=%d round=%d kind=%s net=%d final=%t seq=%d\n",
			st.ID, st.Player, st.Room, st.Match, st.Round, st.Kind, st.Net, st.Final, st.Seq)
	}
	return engine.FormatFrame(s.Frame, textForm, b.String())
}

// parse reads the text form written by format (and by hand). Errors are
// *ParseError values naming the line and what was expected there, e.g.
// `line 7: want "net=<int>", got "net=x"`. The result is Validated, not
// checked against the world rules: a hand-edited file that breaks them still
// parses and replays; call checkWorld to know whether it can happen.
func parse(text string) (Schedule, error) {
	p := &settleParser{settled: map[settleKey]int{}}
	f, err := engine.ParseFrame(text, textForm, p)
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{Frame: f, Settlements: p.sts}
	if err := validate(s); err != nil {
		return Schedule{}, &engine.ParseError{Msg: err.Error()}
	}
	return s, nil
}

// settleParser reads the settle directives.
type settleParser struct {
	sts     []Settlement
	settled map[settleKey]int
}

func (p *settleParser) Directives() []string { return []string{"settle"} }
func (p *settleParser) Msgs() int            { return len(p.sts) }

// settleKey is what makes a settlement unique (see Settlement).
type settleKey struct {
	player uint32
	match  uint64
	kind   Kind
}

var settleFields = []string{"player", "room", "match", "round", "kind", "net", "final", "seq"}

var settleShape = map[string]string{
	"player": "<uint>", "room": "<uint>", "match": "<uint>", "round": "<uint>",
	"kind": "instant|final|third|kind<N>", "net": "<int>", "final": "true|false", "seq": "<uint>",
}

func (p *settleParser) Directive(line int, toks []string) error {
	kv, bare, err := engine.Fields(line, toks[1:], settleFields, settleShape)
	if err != nil {
		return err
	}
	if len(p.sts) == MaxSettlements {
		return engine.Errorf(line, "more than %d settlements (MaxSettlements)", MaxSettlements)
	}
	want := fmt.Sprintf("s%d", len(p.sts))
	if len(bare) != 1 || bare[0] != want {
		got := strings.Join(bare, " ")
		return engine.Errorf(line, "want the settlement's id %q (settlements are declared s0, s1, ... in order), got %q", want, got)
	}
	st := Settlement{ID: len(p.sts)}
	uint := func(key string, bits int) (uint64, error) {
		n, err := strconv.ParseUint(kv[key], 10, bits)
		if err != nil {
			return 0, engine.Bad(line, key, "<uint>", kv[key])
		}
		return n, nil
	}
	var n uint64
	if n, err = uint("player", 32); err != nil {
		return err
	}
	st.Player = uint32(n)
	if n, err = uint("room", 32); err != nil {
		return err
	}
	st.Room = uint32(n)
	if st.Match, err = uint("match", 64); err != nil {
		return err
	}
	if n, err = uint("round", 32); err != nil {
		return err
	}
	st.Round = uint32(n)
	if st.Seq, err = uint("seq", 64); err != nil {
		return err
	}
	k, ok := parseKind(kv["kind"])
	if !ok {
		return engine.Bad(line, "kind", settleShape["kind"], kv["kind"])
	}
	st.Kind = k
	if st.Net, err = strconv.ParseInt(kv["net"], 10, 64); err != nil {
		return engine.Bad(line, "net", "<int>", kv["net"])
	}
	switch kv["final"] {
	case "true":
		st.Final = true
	case "false":
	default:
		return engine.Bad(line, "final", "true|false", kv["final"])
	}
	sk := settleKey{st.Player, st.Match, st.Kind}
	if prev, dup := p.settled[sk]; dup {
		return engine.Errorf(line, "s%d is the same settlement as s%d (player=%d match=%d kind=%s): (player, match, kind) is unique", st.ID, prev, st.Player, st.Match, st.Kind)
	}
	p.settled[sk] = st.ID
	p.sts = append(p.sts, st)
	return nil
}

func parseKind(v string) (Kind, bool) {
	for k := KindInstant; k <= KindThird; k++ {
		if v == k.String() {
			return k, true
		}
	}
	if rest, ok := strings.CutPrefix(v, "kind"); ok {
		n, err := strconv.ParseUint(rest, 10, 8)
		if err == nil && Kind(n) > KindThird {
			return Kind(n), true
		}
	}
	return 0, false
}

// validate reports the first way s is not a well-formed schedule: a known
// family, settlement IDs dense and in order, (Player, Match, Kind) unique,
// and a well-formed frame (engine.ValidateFrame: every header in range,
// deliveries naming a settlement and a node in range in nondecreasing At
// order, faults in increasing (Attempt, Effect) order with known kinds, no
// faults in a Concurrent schedule, and Switches >= 0 and only in a
// Concurrent schedule). Run panics on a schedule validate rejects. Whether
// the schedule is a world that can happen (rounds, sequence numbers, room
// returns) is checkWorld's business.
func validate(s Schedule) error {
	if err := validateTruth(s); err != nil {
		return err
	}
	if err := engine.ValidateFrame(s.Frame, messages(len(s.Settlements))); err != nil {
		return err
	}
	uniq := make(map[settleKey]int, len(s.Settlements))
	for i, st := range s.Settlements {
		k := settleKey{st.Player, st.Match, st.Kind}
		if j, dup := uniq[k]; dup {
			return fmt.Errorf("s%d and s%d are the same settlement (player=%d match=%d kind=%s): (player, match, kind) is unique", j, i, st.Player, st.Match, st.Kind)
		}
		uniq[k] = i
	}
	return nil
}

// validateTruth is what Run checks of the settlement world's own part on
// every call (the engine checks the frame): a known family, no more than
// MaxSettlements, IDs dense and in order. The uniqueness of (Player,
// Match, Kind) costs a map and does not concern the runner's safety.
func validateTruth(s Schedule) error {
	if err := checkFamily(s.Family); err != nil {
		return err
	}
	if n := len(s.Settlements); n > MaxSettlements {
		return fmt.Errorf("%d settlements, over the limit of %d (MaxSettlements)", n, MaxSettlements)
	}
	for i, st := range s.Settlements {
		if st.ID != i {
			return fmt.Errorf("settlement %d has ID %d (IDs are dense and in order)", i, st.ID)
		}
	}
	return nil
}
