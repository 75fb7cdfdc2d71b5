package faults

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The text form of a Schedule (Format writes it, Parse reads it):
//
//	# comments run from '#' to the end of the line; blank lines are ignored
//	family late
//	nodes 1
//	retry 250ms
//	max-attempts 16
//	concurrent false
//	give-up false
//	switches 1 0 2 1
//	settle s0 player=1 room=2 match=1 round=1 kind=instant net=-10 final=false seq=1
//	deliver at=250ms s0 node=0
//	fault attempt=4 effect=1 crash-after
//
// One directive per line. Header lines (family, nodes, retry, max-attempts,
// concurrent, give-up, switches) appear once each, anywhere; concurrent and
// give-up are optional (false), and so is switches (the interleaving of a
// concurrent schedule, Schedule.Switches: one or more choices >= 0; absent
// means all zeros). Settlements are declared in ID order (s0, s1, ...)
// before the deliveries that name them; deliveries are in nondecreasing at=
// order; faults are in Schedule.Faults order (recover=n ones first, the
// last Recover first; then attempt=n increasing; effects increasing). Named
// fields may come in any order.
// Durations use Go's syntax (time.ParseDuration). Fault kinds are
// crash-before, crash-after, fail and timeout.

// formatVersion is the first line Format writes. Parse treats it as a
// comment; it tells a reader which program wrote the file.
const formatVersion = "# onceproof schedule v1"

// Format renders s in the text form Parse reads back: Parse(Format(s))
// equals s for every valid s.
func Format(s Schedule) string {
	var b strings.Builder
	b.Grow(128 + 96*len(s.Settlements) + 40*len(s.Deliveries) + 40*len(s.Faults))
	b.WriteString(formatVersion + "\n")
	fmt.Fprintf(&b, "family %s\nnodes %d\nretry %s\nmax-attempts %d\nconcurrent %t\n",
		s.Family, s.Nodes, s.RetryAfter, s.MaxAttempts, s.Concurrent)
	if s.GiveUp {
		b.WriteString("# the sender does not resend at the drain: only Recover can finish\ngive-up true\n")
	}
	if len(s.Switches) > 0 {
		b.WriteString("# the scheduler's choices among same-time goroutines (past the end: 0)\nswitches")
		for _, v := range s.Switches {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(v))
		}
		b.WriteByte('\n')
	}
	if len(s.Settlements) > 0 {
		b.WriteString("\n# settlements: the ground truth (sN is settlement N)\n")
	}
	for _, st := range s.Settlements {
		fmt.Fprintf(&b, "settle s%d player=%d room=%d match=%d round=%d kind=%s net=%d final=%t seq=%d\n",
			st.ID, st.Player, st.Room, st.Match, st.Round, st.Kind, st.Net, st.Final, st.Seq)
	}
	if len(s.Deliveries) > 0 {
		b.WriteString("\n# planned deliveries (the sender adds its own retries)\n")
	}
	for _, d := range s.Deliveries {
		fmt.Fprintf(&b, "deliver at=%s s%d node=%d\n", d.At, d.Settlement, d.Node)
	}
	if len(s.Faults) > 0 {
		b.WriteString("\n# faults: at the effect-th env call of the attempt-th Deliver or the recover-th Recover (all from 0)\n")
	}
	for _, f := range s.Faults {
		fmt.Fprintf(&b, "fault %s %s\n", f.point(), f.Kind)
	}
	return b.String()
}

// ParseError is a Parse failure: the line (from 1; 0 when the problem is
// the file as a whole, e.g. a missing header) and what was wrong.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "schedule: " + e.Msg
	}
	return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
}

// Parse reads the text form written by Format (and by hand). Errors are
// *ParseError values naming the line and what was expected there, e.g.
// `line 7: want "net=<int>", got "net=x"`. The result is Validated, not
// checked against the world rules: a hand-edited file that breaks them still
// parses and replays; call CheckWorld to know whether it can happen.
func Parse(text string) (Schedule, error) {
	p := parser{seen: map[string]int{}, settled: map[settleKey]int{}}
	for i, raw := range strings.Split(text, "\n") {
		p.line = i + 1
		if j := strings.IndexByte(raw, '#'); j >= 0 {
			raw = raw[:j]
		}
		toks := strings.Fields(raw)
		if len(toks) == 0 {
			continue
		}
		if err := p.directive(toks); err != nil {
			return Schedule{}, err
		}
	}
	return p.finish()
}

type parser struct {
	s        Schedule
	line     int
	seen     map[string]int // header directive -> line it appeared on
	delLines []int          // line of each delivery, for errors found at the end
	settled  map[settleKey]int
}

// settleKey is what makes a settlement unique (see Settlement).
type settleKey struct {
	player uint32
	match  uint64
	kind   Kind
}

func (p *parser) errf(format string, args ...any) error {
	return &ParseError{Line: p.line, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) directive(toks []string) error {
	name, args := toks[0], toks[1:]
	switch name {
	case "family", "nodes", "retry", "max-attempts", "concurrent", "give-up":
		return p.header(name, args)
	case "switches":
		return p.switches(args)
	case "settle":
		return p.settle(args)
	case "deliver":
		return p.deliver(args)
	case "fault":
		return p.fault(args)
	}
	return p.errf("want a directive (family, nodes, retry, max-attempts, concurrent, give-up, switches, settle, deliver, fault), got %q", name)
}

// switches reads "switches 1 0 2": the scheduler's choices, each >= 0.
func (p *parser) switches(args []string) error {
	if prev, ok := p.seen["switches"]; ok {
		return p.errf("switches given twice (first on line %d)", prev)
	}
	p.seen["switches"] = p.line
	if len(args) == 0 {
		return p.errf(`want "switches" followed by one or more choices >= 0 (omit the line for all zeros)`)
	}
	if len(args) > MaxSwitches {
		return p.errf("%d switches, over the limit of %d (MaxSwitches)", len(args), MaxSwitches)
	}
	sw := make([]int, len(args))
	for i, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil || n < 0 {
			return p.errf("want switch %d to be an integer >= 0, got %q", i+1, a)
		}
		sw[i] = n
	}
	p.s.Switches = sw
	return nil
}

func (p *parser) header(name string, args []string) error {
	if prev, ok := p.seen[name]; ok {
		return p.errf("%s given twice (first on line %d)", name, prev)
	}
	p.seen[name] = p.line
	want := map[string]string{
		"family":       "a family name",
		"nodes":        fmt.Sprintf("a node count 1..%d (MaxNodes)", MaxNodes),
		"retry":        fmt.Sprintf("a duration > 0 and <= %s (MaxRetryAfter; e.g. 250ms)", MaxRetryAfter),
		"max-attempts": fmt.Sprintf("an attempt count 1..%d (MaxAttempts)", MaxAttempts),
		"concurrent":   "true or false",
		"give-up":      "true or false",
	}[name]
	if len(args) != 1 {
		return p.errf("want %q followed by %s, got %d values", name, want, len(args))
	}
	v := args[0]
	switch name {
	case "family":
		f := Family(v)
		if err := f.Check(); err != nil {
			return p.errf("%v", err)
		}
		p.s.Family = f
	case "nodes":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxNodes {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		p.s.Nodes = n
	case "retry":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > MaxRetryAfter {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		p.s.RetryAfter = d
	case "max-attempts":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAttempts {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		p.s.MaxAttempts = n
	case "concurrent", "give-up":
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		if name == "give-up" {
			p.s.GiveUp = b
		} else {
			p.s.Concurrent = b
		}
	}
	return nil
}

// fields splits key=value tokens. Tokens without '=' are returned in bare,
// in order. Every key in want must be present exactly once; no other key may
// appear. want maps a key to the value shape shown in errors ("<int>").
func (p *parser) fields(args []string, want []string, shape map[string]string) (kv map[string]string, bare []string, err error) {
	kv = make(map[string]string, len(want))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			bare = append(bare, a)
			continue
		}
		if _, known := shape[k]; !known {
			return nil, nil, p.errf("unknown field %q (want %s)", k, strings.Join(want, ", "))
		}
		if _, dup := kv[k]; dup {
			return nil, nil, p.errf("field %q given twice", k)
		}
		kv[k] = v
	}
	for _, k := range want {
		if _, ok := kv[k]; !ok {
			return nil, nil, p.errf("missing %q", k+"="+shape[k])
		}
	}
	return kv, bare, nil
}

func (p *parser) bad(key, shape, val string) error {
	return p.errf("want %q, got %q", key+"="+shape, key+"="+val)
}

func (p *parser) uint(kv map[string]string, key string, bits int) (uint64, error) {
	n, err := strconv.ParseUint(kv[key], 10, bits)
	if err != nil {
		return 0, p.bad(key, "<uint>", kv[key])
	}
	return n, nil
}

var settleFields = []string{"player", "room", "match", "round", "kind", "net", "final", "seq"}

var settleShape = map[string]string{
	"player": "<uint>", "room": "<uint>", "match": "<uint>", "round": "<uint>",
	"kind": "instant|final|third|kind<N>", "net": "<int>", "final": "true|false", "seq": "<uint>",
}

func (p *parser) settle(args []string) error {
	kv, bare, err := p.fields(args, settleFields, settleShape)
	if err != nil {
		return err
	}
	if len(p.s.Settlements) == MaxSettlements {
		return p.errf("more than %d settlements (MaxSettlements)", MaxSettlements)
	}
	want := fmt.Sprintf("s%d", len(p.s.Settlements))
	if len(bare) != 1 || bare[0] != want {
		got := strings.Join(bare, " ")
		return p.errf("want the settlement's id %q (settlements are declared s0, s1, ... in order), got %q", want, got)
	}
	st := Settlement{ID: len(p.s.Settlements)}
	var n uint64
	if n, err = p.uint(kv, "player", 32); err != nil {
		return err
	}
	st.Player = uint32(n)
	if n, err = p.uint(kv, "room", 32); err != nil {
		return err
	}
	st.Room = uint32(n)
	if st.Match, err = p.uint(kv, "match", 64); err != nil {
		return err
	}
	if n, err = p.uint(kv, "round", 32); err != nil {
		return err
	}
	st.Round = uint32(n)
	if st.Seq, err = p.uint(kv, "seq", 64); err != nil {
		return err
	}
	k, ok := parseKind(kv["kind"])
	if !ok {
		return p.bad("kind", settleShape["kind"], kv["kind"])
	}
	st.Kind = k
	if st.Net, err = strconv.ParseInt(kv["net"], 10, 64); err != nil {
		return p.bad("net", "<int>", kv["net"])
	}
	switch kv["final"] {
	case "true":
		st.Final = true
	case "false":
	default:
		return p.bad("final", "true|false", kv["final"])
	}
	sk := settleKey{st.Player, st.Match, st.Kind}
	if prev, dup := p.settled[sk]; dup {
		return p.errf("s%d is the same settlement as s%d (player=%d match=%d kind=%s): (player, match, kind) is unique", st.ID, prev, st.Player, st.Match, st.Kind)
	}
	p.settled[sk] = st.ID
	p.s.Settlements = append(p.s.Settlements, st)
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

var deliverShape = map[string]string{"at": "<duration>", "node": "<int>"}

func (p *parser) deliver(args []string) error {
	kv, bare, err := p.fields(args, []string{"at", "node"}, deliverShape)
	if err != nil {
		return err
	}
	if len(p.s.Deliveries) == MaxDeliveries {
		return p.errf("more than %d deliveries (MaxDeliveries)", MaxDeliveries)
	}
	if len(bare) != 1 {
		return p.errf("want one settlement id (e.g. s3), got %q", strings.Join(bare, " "))
	}
	id, ok := parseID(bare[0])
	if !ok {
		return p.errf("want a settlement id (e.g. s3), got %q", bare[0])
	}
	if id >= len(p.s.Settlements) {
		return p.errf("%s is not declared (declare settlements before the deliveries that name them; %d declared)", bare[0], len(p.s.Settlements))
	}
	at, err := time.ParseDuration(kv["at"])
	if err != nil || at < 0 || at > MaxAt {
		return p.bad("at", fmt.Sprintf("<duration 0..%s (MaxAt)>", MaxAt), kv["at"])
	}
	if n := len(p.s.Deliveries); n > 0 && at < p.s.Deliveries[n-1].At {
		return p.errf("at=%s is before the previous delivery's at=%s (deliveries are in time order)", at, p.s.Deliveries[n-1].At)
	}
	node, err := strconv.Atoi(kv["node"])
	if err != nil || node < 0 {
		return p.bad("node", "<int >= 0>", kv["node"])
	}
	p.s.Deliveries = append(p.s.Deliveries, Delivery{At: at, Settlement: id, Node: node})
	p.delLines = append(p.delLines, p.line)
	return nil
}

func parseID(tok string) (int, bool) {
	rest, ok := strings.CutPrefix(tok, "s")
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

var faultShape = map[string]string{"attempt": "<int>", "recover": "<int>", "effect": "<int>"}

func (p *parser) fault(args []string) error {
	kv, bare, err := p.fields(args, []string{"effect"}, faultShape)
	if err != nil {
		return err
	}
	_, isAttempt := kv["attempt"]
	_, isRecover := kv["recover"]
	if isAttempt == isRecover {
		return p.errf(`want exactly one of "attempt=<int>" (the n-th Deliver) and "recover=<int>" (the n-th Recover)`)
	}
	if len(p.s.Faults) == MaxFaults {
		return p.errf("more than %d faults (MaxFaults)", MaxFaults)
	}
	kinds := "crash-before, crash-after, fail or timeout"
	if len(bare) != 1 {
		return p.errf("want one fault kind (%s), got %q", kinds, strings.Join(bare, " "))
	}
	f := Fault{}
	switch bare[0] {
	case CrashBefore.String():
		f.Kind = CrashBefore
	case CrashAfter.String():
		f.Kind = CrashAfter
	case FailBefore.String():
		f.Kind = FailBefore
	case TimeoutAfter.String():
		f.Kind = TimeoutAfter
	default:
		return p.errf("want a fault kind (%s), got %q", kinds, bare[0])
	}
	if isAttempt {
		if f.Attempt, err = strconv.Atoi(kv["attempt"]); err != nil || f.Attempt < 0 || f.Attempt > MaxAttemptIndex {
			return p.bad("attempt", fmt.Sprintf("<int 0..%d (MaxAttemptIndex)>", MaxAttemptIndex), kv["attempt"])
		}
	} else {
		r, err := strconv.Atoi(kv["recover"])
		if err != nil || r < 0 || r > MaxAttemptIndex {
			return p.bad("recover", fmt.Sprintf("<int 0..%d (MaxAttemptIndex)>", MaxAttemptIndex), kv["recover"])
		}
		f.Attempt = Recovery(r)
	}
	if f.Effect, err = strconv.Atoi(kv["effect"]); err != nil || f.Effect < 0 || f.Effect > MaxEffectIndex {
		return p.bad("effect", fmt.Sprintf("<int 0..%d (MaxEffectIndex)>", MaxEffectIndex), kv["effect"])
	}
	if n := len(p.s.Faults); n > 0 {
		prev := p.s.Faults[n-1]
		if f.Attempt < prev.Attempt || (f.Attempt == prev.Attempt && f.Effect <= prev.Effect) {
			return p.errf("fault %s must come after %s (faults are in order: recover=n from the last to the first, then attempt=n increasing, effects increasing; one per point)",
				f.point(), prev.point())
		}
	}
	p.s.Faults = append(p.s.Faults, f)
	return nil
}

func (p *parser) finish() (Schedule, error) {
	for _, h := range []string{"family", "nodes", "retry", "max-attempts"} {
		if _, ok := p.seen[h]; !ok {
			return Schedule{}, &ParseError{Msg: fmt.Sprintf("missing the %q header line", h)}
		}
	}
	if line, ok := p.seen["switches"]; ok && !p.s.Concurrent {
		return Schedule{}, &ParseError{Line: line, Msg: "switches in a schedule that is not concurrent (add \"concurrent true\" or drop the line)"}
	}
	for i, d := range p.s.Deliveries {
		if d.Node >= p.s.Nodes {
			return Schedule{}, &ParseError{Line: p.delLines[i], Msg: fmt.Sprintf("node=%d is out of range (nodes %d: want 0..%d)", d.Node, p.s.Nodes, p.s.Nodes-1)}
		}
	}
	if err := Validate(p.s); err != nil {
		return Schedule{}, &ParseError{Msg: err.Error()}
	}
	return p.s, nil
}

// Validate reports the first way s is not a well-formed schedule: every
// header in range, settlement IDs dense and in order, (Player, Match, Kind)
// unique, deliveries naming a settlement and a node in range in
// nondecreasing At order, faults in increasing (Attempt, Effect) order with
// known kinds, no faults in a Concurrent schedule, and Switches >= 0 and
// only in a Concurrent schedule. Run panics on a
// schedule Validate rejects. Whether the schedule is a world that can happen
// (rounds, sequence numbers, room returns) is CheckWorld's business.
func Validate(s Schedule) error {
	if err := validateShape(s); err != nil {
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

// validateShape is Validate without the uniqueness of (Player, Match, Kind),
// which costs a map and does not concern the runner's safety: it is what Run
// checks on every call.
func validateShape(s Schedule) error {
	if err := s.Family.Check(); err != nil {
		return err
	}
	if s.Nodes < 1 || s.Nodes > MaxNodes {
		return fmt.Errorf("nodes is %d, want 1..%d (MaxNodes)", s.Nodes, MaxNodes)
	}
	if s.RetryAfter <= 0 || s.RetryAfter > MaxRetryAfter {
		return fmt.Errorf("retry is %s, want > 0 and <= %s (MaxRetryAfter)", s.RetryAfter, MaxRetryAfter)
	}
	if s.MaxAttempts < 1 || s.MaxAttempts > MaxAttempts {
		return fmt.Errorf("max-attempts is %d, want 1..%d (MaxAttempts)", s.MaxAttempts, MaxAttempts)
	}
	for _, c := range []struct {
		what   string
		n, max int
		limit  string
	}{
		{"settlements", len(s.Settlements), MaxSettlements, "MaxSettlements"},
		{"deliveries", len(s.Deliveries), MaxDeliveries, "MaxDeliveries"},
		{"faults", len(s.Faults), MaxFaults, "MaxFaults"},
		{"switches", len(s.Switches), MaxSwitches, "MaxSwitches"},
	} {
		if c.n > c.max {
			return fmt.Errorf("%d %s, over the limit of %d (%s)", c.n, c.what, c.max, c.limit)
		}
	}
	for i, st := range s.Settlements {
		if st.ID != i {
			return fmt.Errorf("settlement %d has ID %d (IDs are dense and in order)", i, st.ID)
		}
	}
	for i, d := range s.Deliveries {
		if d.Settlement < 0 || d.Settlement >= len(s.Settlements) {
			return fmt.Errorf("delivery %d names s%d, want s0..s%d", i, d.Settlement, len(s.Settlements)-1)
		}
		if d.Node < 0 || d.Node >= s.Nodes {
			return fmt.Errorf("delivery %d is at node %d, want 0..%d", i, d.Node, s.Nodes-1)
		}
		if d.At < 0 || d.At > MaxAt {
			return fmt.Errorf("delivery %d is at %s, want 0..%s (MaxAt)", i, d.At, MaxAt)
		}
		if i > 0 && d.At < s.Deliveries[i-1].At {
			return fmt.Errorf("delivery %d at %s is before delivery %d at %s (deliveries are in time order)", i, d.At, i-1, s.Deliveries[i-1].At)
		}
	}
	if s.Concurrent && len(s.Faults) > 0 {
		return errors.New("a concurrent schedule has no faults (free-running attempt numbers are not deterministic)")
	}
	if !s.Concurrent && len(s.Switches) > 0 {
		return errors.New("switches in a schedule that is not concurrent (they choose among same-time goroutines)")
	}
	for i, v := range s.Switches {
		if v < 0 {
			return fmt.Errorf("switch %d is %d, want >= 0", i, v)
		}
	}
	for i, f := range s.Faults {
		if f.Attempt < Recovery(MaxAttemptIndex) || f.Effect < 0 || f.Attempt > MaxAttemptIndex || f.Effect > MaxEffectIndex {
			return fmt.Errorf("fault %d is at %s, want attempt or recover 0..%d (MaxAttemptIndex) and effect 0..%d (MaxEffectIndex)", i, f.point(), MaxAttemptIndex, MaxEffectIndex)
		}
		if f.Kind > TimeoutAfter {
			return fmt.Errorf("fault %d has unknown kind %d", i, f.Kind)
		}
		if i > 0 {
			prev := s.Faults[i-1]
			if f.Attempt < prev.Attempt || (f.Attempt == prev.Attempt && f.Effect <= prev.Effect) {
				return fmt.Errorf("fault %d (%s) is not after fault %d (%s)", i, f.point(), i-1, prev.point())
			}
		}
	}
	return nil
}

// point is the fault's place in the text form: "attempt=3 effect=1" or
// "recover=0 effect=2".
func (f Fault) point() string {
	if f.Attempt < 0 {
		return fmt.Sprintf("recover=%d effect=%d", RecoveryOf(f.Attempt), f.Effect)
	}
	return fmt.Sprintf("attempt=%d effect=%d", f.Attempt, f.Effect)
}
