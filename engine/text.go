package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The text form of a schedule: a world's Format and Parse write and read
// it through FormatFrame and ParseFrame, which own the lines every world
// shares:
//
//	# comments run from '#' to the end of the line; blank lines are ignored
//	family late                  (another subject's: family loot:crash)
//	nodes 1
//	retry 250ms
//	max-attempts 16
//	concurrent false
//	give-up false
//	switches 1 0 2 1
//	... the world's own directives (settle s0 ..., session x0 ..., ...)
//	deliver at=250ms s0 node=0
//	fault attempt=4 effect=1 crash-after
//	fault attempt=6 effect=2 pause for=12s
//
// One directive per line. Header lines (family, nodes, retry,
// max-attempts, concurrent, give-up, switches) appear once each, anywhere;
// concurrent and give-up are optional (false), and so is switches (the
// interleaving of a concurrent schedule, Frame.Switches: one or more
// choices >= 0; absent means all zeros). Messages are declared before the
// deliveries that name them; deliveries are in nondecreasing at= order;
// faults are in Frame.Faults order (recover=n ones first, the last
// Recover first; then attempt=n increasing; effects increasing). Named
// fields may come in any order. Durations use Go's syntax
// (time.ParseDuration). Fault kinds are crash-before, crash-after, fail,
// timeout and pause (with for=<duration>).

// formatVersion is the first line Format writes. Parse treats it as a
// comment; it tells a reader which program wrote the file.
const formatVersion = "# onceproof schedule v1"

// TextForm is what the shared lines need to know of a world.
type TextForm struct {
	// Subject prefixes the family in the family header ("loot" writes
	// "family loot:crash"), so a file says which world it is; "" is the
	// default subject (settlements), whose files carry no prefix.
	Subject string
	// Messages names the world's messages in deliver lines (Letter) and
	// errors (Noun, plural with "s"); N is unused here.
	Messages Messages
	// CheckFamily reports whether a family (without the prefix) is the
	// world's.
	CheckFamily func(Family) error
}

// FamilyLine is the family header's value for f in form: f, or
// "subject:f".
func (form TextForm) FamilyLine(f Family) string {
	if form.Subject == "" {
		return string(f)
	}
	return form.Subject + ":" + string(f)
}

// SubjectOf returns the subject a schedule text names in its family
// header ("" for the default subject), reading no further than that line.
func SubjectOf(text string) string {
	for line := range strings.SplitSeq(text, "\n") {
		if j := strings.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		toks := strings.Fields(line)
		if len(toks) == 2 && toks[0] == "family" {
			if subj, _, ok := strings.Cut(toks[1], ":"); ok {
				return subj
			}
			return ""
		}
	}
	return ""
}

// FormatFrame renders f with the world's block (its ground truth, each
// line ending in a newline, introduced by a comment) between the header
// and the deliveries.
func FormatFrame(f Frame, form TextForm, world string) string {
	var b strings.Builder
	b.Grow(128 + len(world) + 40*len(f.Deliveries) + 40*len(f.Faults))
	b.WriteString(formatVersion + "\n")
	fmt.Fprintf(&b, "family %s\nnodes %d\nretry %s\nmax-attempts %d\nconcurrent %t\n",
		form.FamilyLine(f.Family), f.Nodes, f.RetryAfter, f.MaxAttempts, f.Concurrent)
	if f.GiveUp {
		b.WriteString("# the sender does not resend at the drain: only Recover can finish\ngive-up true\n")
	}
	if len(f.Switches) > 0 {
		b.WriteString("# the scheduler's choices among same-time goroutines (past the end: 0)\nswitches")
		for _, v := range f.Switches {
			b.WriteByte(' ')
			b.WriteString(strconv.Itoa(v))
		}
		b.WriteByte('\n')
	}
	b.WriteString(world)
	if len(f.Deliveries) > 0 {
		b.WriteString("\n# planned deliveries (the sender adds its own retries)\n")
	}
	for _, d := range f.Deliveries {
		fmt.Fprintf(&b, "deliver at=%s %s%d node=%d\n", d.At, form.Messages.Letter, d.Msg, d.Node)
	}
	if len(f.Faults) > 0 {
		b.WriteString("\n# faults: at the effect-th env call of the attempt-th Deliver or the recover-th Recover (all from 0)\n")
	}
	for _, x := range f.Faults {
		if x.Kind == Pause {
			fmt.Fprintf(&b, "fault %s %s for=%s\n", x.Point(), x.Kind, x.For)
			continue
		}
		fmt.Fprintf(&b, "fault %s %s\n", x.Point(), x.Kind)
	}
	formatOutages(&b, f)
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

// Errorf is a *ParseError on line.
func Errorf(line int, format string, args ...any) error {
	return &ParseError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// WorldText reads a world's own directives for ParseFrame.
type WorldText interface {
	// Directives names them, in the order an error lists them.
	Directives() []string
	// Directive reads one line whose first token is one of them; its
	// errors are *ParseError (Errorf).
	Directive(line int, toks []string) error
	// Msgs is how many messages are declared so far: a deliver line may
	// name only those.
	Msgs() int
}

// ParseFrame reads the shared lines of text and hands every other
// directive to w. The frame is checked line by line and for its headers;
// the world validates the whole schedule after (ValidateFrame and its
// own rules), and wraps a failure in a *ParseError with Line 0.
func ParseFrame(text string, form TextForm, w WorldText) (Frame, error) {
	p := frameParser{form: form, w: w, seen: map[string]int{}}
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
			return Frame{}, err
		}
	}
	return p.finish()
}

type frameParser struct {
	form     TextForm
	w        WorldText
	f        Frame
	line     int
	seen     map[string]int // header directive -> line it appeared on
	delLines []int          // line of each delivery, for errors found at the end
}

func (p *frameParser) errf(format string, args ...any) error {
	return Errorf(p.line, format, args...)
}

func (p *frameParser) directive(toks []string) error {
	name, args := toks[0], toks[1:]
	switch name {
	case "family", "nodes", "retry", "max-attempts", "concurrent", "give-up":
		return p.header(name, args)
	case "switches":
		return p.switches(args)
	case "deliver":
		return p.deliver(args)
	case "fault":
		return p.fault(args)
	case "outage":
		return p.outage(args)
	}
	for _, d := range p.w.Directives() {
		if name == d {
			return p.w.Directive(p.line, toks)
		}
	}
	names := append([]string{"family", "nodes", "retry", "max-attempts", "concurrent", "give-up", "switches"}, p.w.Directives()...)
	return p.errf("want a directive (%s, deliver, fault, outage), got %q", strings.Join(names, ", "), name)
}

// switches reads "switches 1 0 2": the scheduler's choices, each >= 0.
func (p *frameParser) switches(args []string) error {
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
	p.f.Switches = sw
	return nil
}

func (p *frameParser) header(name string, args []string) error {
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
		subj, f, ok := strings.Cut(v, ":")
		if !ok {
			subj, f = "", v
		}
		if subj != p.form.Subject {
			return p.errf("family %q is of subject %q, not %q (a %s schedule's family header reads %q)", v, subjectName(subj), subjectName(p.form.Subject), subjectName(p.form.Subject), p.form.FamilyLine("<family>"))
		}
		if err := p.form.CheckFamily(Family(f)); err != nil {
			return p.errf("%v", err)
		}
		p.f.Family = Family(f)
	case "nodes":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxNodes {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		p.f.Nodes = n
	case "retry":
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > MaxRetryAfter {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		p.f.RetryAfter = d
	case "max-attempts":
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxAttempts {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		p.f.MaxAttempts = n
	case "concurrent", "give-up":
		b, err := strconv.ParseBool(v)
		if err != nil || (v != "true" && v != "false") {
			return p.errf("want %q followed by %s, got %q", name, want, v)
		}
		if name == "give-up" {
			p.f.GiveUp = b
		} else {
			p.f.Concurrent = b
		}
	}
	return nil
}

func subjectName(s string) string {
	if s == "" {
		return "settle"
	}
	return s
}

// Fields splits the key=value tokens of a directive's args on line. Tokens
// without '=' are returned in bare, in order. Every key in want must be
// present exactly once; keys of shape not in want are optional; no other
// key may appear. shape maps a key to the value shape shown in errors
// ("<int>").
func Fields(line int, args []string, want []string, shape map[string]string) (kv map[string]string, bare []string, err error) {
	kv = make(map[string]string, len(want))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			bare = append(bare, a)
			continue
		}
		if _, known := shape[k]; !known {
			return nil, nil, Errorf(line, "unknown field %q (want %s)", k, strings.Join(want, ", "))
		}
		if _, dup := kv[k]; dup {
			return nil, nil, Errorf(line, "field %q given twice", k)
		}
		kv[k] = v
	}
	for _, k := range want {
		if _, ok := kv[k]; !ok {
			return nil, nil, Errorf(line, "missing %q", k+"="+shape[k])
		}
	}
	return kv, bare, nil
}

// Bad is the error of a field whose value does not have its shape.
func Bad(line int, key, shape, val string) error {
	return Errorf(line, "want %q, got %q", key+"="+shape, key+"="+val)
}

// ParseID reads a message or item id "<letter><n>" (s3, r0; no leading
// zeros).
func ParseID(letter, tok string) (int, bool) {
	rest, ok := strings.CutPrefix(tok, letter)
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n >= 0
}

var deliverShape = map[string]string{"at": "<duration>", "node": "<int>"}

func (p *frameParser) deliver(args []string) error {
	m := p.form.Messages
	kv, bare, err := Fields(p.line, args, []string{"at", "node"}, deliverShape)
	if err != nil {
		return err
	}
	if len(p.f.Deliveries) == MaxDeliveries {
		return p.errf("more than %d deliveries (MaxDeliveries)", MaxDeliveries)
	}
	if len(bare) != 1 {
		return p.errf("want one %s id (e.g. %s3), got %q", m.Noun, m.Letter, strings.Join(bare, " "))
	}
	id, ok := ParseID(m.Letter, bare[0])
	if !ok {
		return p.errf("want a %s id (e.g. %s3), got %q", m.Noun, m.Letter, bare[0])
	}
	if n := p.w.Msgs(); id >= n {
		return p.errf("%s is not declared (declare %ss before the deliveries that name them; %d declared)", bare[0], m.Noun, n)
	}
	at, err := time.ParseDuration(kv["at"])
	if err != nil || at < 0 || at > MaxAt {
		return Bad(p.line, "at", fmt.Sprintf("<duration 0..%s (MaxAt)>", MaxAt), kv["at"])
	}
	if n := len(p.f.Deliveries); n > 0 && at < p.f.Deliveries[n-1].At {
		return p.errf("at=%s is before the previous delivery's at=%s (deliveries are in time order)", at, p.f.Deliveries[n-1].At)
	}
	node, err := strconv.Atoi(kv["node"])
	if err != nil || node < 0 {
		return Bad(p.line, "node", "<int >= 0>", kv["node"])
	}
	p.f.Deliveries = append(p.f.Deliveries, Delivery{At: at, Msg: id, Node: node})
	p.delLines = append(p.delLines, p.line)
	return nil
}

var faultShape = map[string]string{"attempt": "<int>", "recover": "<int>", "delivery": "<int>", "effect": "<int>", "for": "<duration>"}

func (p *frameParser) fault(args []string) error {
	kv, bare, err := Fields(p.line, args, []string{"effect"}, faultShape)
	if err != nil {
		return err
	}
	_, isAttempt := kv["attempt"]
	_, isRecover := kv["recover"]
	_, isDelivery := kv["delivery"]
	if n := map[bool]int{true: 1}[isAttempt] + map[bool]int{true: 1}[isRecover] + map[bool]int{true: 1}[isDelivery]; n != 1 {
		return p.errf(`want exactly one of "attempt=<int>" (the n-th Deliver), "recover=<int>" (the n-th Recover) and "delivery=<int>" (the attempt carrying the n-th planned delivery)`)
	}
	if len(p.f.Faults) == MaxFaults {
		return p.errf("more than %d faults (MaxFaults)", MaxFaults)
	}
	kinds := "crash-before, crash-after, fail, timeout or pause"
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
	case Pause.String():
		f.Kind = Pause
	default:
		return p.errf("want a fault kind (%s), got %q", kinds, bare[0])
	}
	if v, has := kv["for"]; f.Kind == Pause {
		d, err := time.ParseDuration(v)
		if !has || err != nil || d <= 0 || d > MaxPause {
			return Bad(p.line, "for", fmt.Sprintf("<duration > 0 and <= %s (MaxPause)>", MaxPause), v)
		}
		f.For = d
	} else if has {
		return p.errf("for=%s on a %s fault (only a pause lasts)", v, f.Kind)
	}
	switch {
	case isAttempt:
		if f.Attempt, err = strconv.Atoi(kv["attempt"]); err != nil || f.Attempt < 0 || f.Attempt > MaxAttemptIndex {
			return Bad(p.line, "attempt", fmt.Sprintf("<int 0..%d (MaxAttemptIndex)>", MaxAttemptIndex), kv["attempt"])
		}
	case isDelivery:
		f.OnDelivery = true
		if f.Attempt, err = strconv.Atoi(kv["delivery"]); err != nil || f.Attempt < 0 || f.Attempt > MaxAttemptIndex {
			return Bad(p.line, "delivery", fmt.Sprintf("<int 0..%d (MaxAttemptIndex)>", MaxAttemptIndex), kv["delivery"])
		}
	default:
		r, err := strconv.Atoi(kv["recover"])
		if err != nil || r < 0 || r > MaxAttemptIndex {
			return Bad(p.line, "recover", fmt.Sprintf("<int 0..%d (MaxAttemptIndex)>", MaxAttemptIndex), kv["recover"])
		}
		f.Attempt = Recovery(r)
	}
	if f.Effect, err = strconv.Atoi(kv["effect"]); err != nil || f.Effect < 0 || f.Effect > MaxEffectIndex {
		return Bad(p.line, "effect", fmt.Sprintf("<int 0..%d (MaxEffectIndex)>", MaxEffectIndex), kv["effect"])
	}
	if n := len(p.f.Faults); n > 0 {
		if prev := p.f.Faults[n-1]; !prev.Before(f) {
			return p.errf("fault %s must come after %s (faults are in order: recover=n from the last to the first, then attempt=n increasing, then delivery=n increasing, effects increasing; one per point)",
				f.Point(), prev.Point())
		}
	}
	p.f.Faults = append(p.f.Faults, f)
	return nil
}

func (p *frameParser) finish() (Frame, error) {
	for _, h := range []string{"family", "nodes", "retry", "max-attempts"} {
		if _, ok := p.seen[h]; !ok {
			return Frame{}, &ParseError{Msg: fmt.Sprintf("missing the %q header line", h)}
		}
	}
	if line, ok := p.seen["switches"]; ok && !p.f.Concurrent {
		return Frame{}, &ParseError{Line: line, Msg: "switches in a schedule that is not concurrent (add \"concurrent true\" or drop the line)"}
	}
	for i, d := range p.f.Deliveries {
		if d.Node >= p.f.Nodes {
			return Frame{}, &ParseError{Line: p.delLines[i], Msg: fmt.Sprintf("node=%d is out of range (nodes %d: want 0..%d)", d.Node, p.f.Nodes, p.f.Nodes-1)}
		}
	}
	return p.f, nil
}
