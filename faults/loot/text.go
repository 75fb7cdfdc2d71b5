package lootfaults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The text form of a Schedule (format writes it, parse reads it) is the
// engine's (engine.FormatFrame), its family header prefixed "loot:", with
// the loot world's directives between the header and the deliveries:
//
//	family loot:ties
//	nodes 2
//	retry 250ms
//	max-attempts 16
//	team 1 2 3
//	fair player=2 wins=1
//	skew node=1 by=-2s
//	lock-skew by=500ms
//	count-wins
//	session x0 quantity=1 deadline=10s
//	session x1 quantity=1 deadline=30s loot=item0
//	members x1 1 2 4
//	bump x1 player=2 wins=1
//	request r0 open x0
//	request r1 claim x0 player=2 intent=NEED
//	request r2 compensate
//	deliver at=0s r0 node=0
//
// team, lock-skew, count-wins: at most once; fair lines by increasing
// player, skew lines by increasing node; sessions and requests declared in
// ID order before what names them; a session's loot= (its Code), members
// (its own team snapshot, once) and bump lines (by increasing player)
// only where it has them. A deadline is by the database's clock, since
// time zero.

// textForm is the loot world's part of the shared lines.
var textForm = engine.TextForm{Subject: "loot", Messages: engine.Messages{Letter: "r", Noun: "request"}, CheckFamily: checkFamily}

// subject is the loot world's name in commands and in a schedule file's
// family header.
const subject = "loot"

// format renders s in the text form parse reads back: parse(format(s))
// equals s for every valid s.
func format(s Schedule) string {
	var b strings.Builder
	b.WriteString("\n# the team snapshot, the server's fairness records (wins), the clocks' offsets from the database's\n")
	b.WriteString("team")
	for _, p := range s.Team {
		fmt.Fprintf(&b, " %d", p)
	}
	b.WriteByte('\n')
	for _, f := range s.Fairness {
		fmt.Fprintf(&b, "fair player=%d wins=%d\n", f.Player, f.Wins)
	}
	for n, d := range s.Skews {
		if d != 0 {
			fmt.Fprintf(&b, "skew node=%d by=%s\n", n, d)
		}
	}
	if s.LockSkew != 0 {
		fmt.Fprintf(&b, "lock-skew by=%s\n", s.LockSkew)
	}
	if s.CountWins {
		b.WriteString("count-wins\n")
	}
	if len(s.Sessions) > 0 {
		b.WriteString("\n# sessions (xN) and requests (rN): the ground truth\n")
	}
	for _, x := range s.Sessions {
		fmt.Fprintf(&b, "session x%d quantity=%d deadline=%s", x.ID, x.Quantity, x.Deadline)
		if x.Code != "" {
			fmt.Fprintf(&b, " loot=%s", x.Code)
		}
		b.WriteByte('\n')
		if x.Members != nil {
			fmt.Fprintf(&b, "members x%d", x.ID)
			for _, p := range x.Members {
				fmt.Fprintf(&b, " %d", p)
			}
			b.WriteByte('\n')
		}
		for _, f := range x.Bumps {
			fmt.Fprintf(&b, "bump x%d player=%d wins=%d\n", x.ID, f.Player, f.Wins)
		}
	}
	for _, r := range s.Requests {
		fmt.Fprintf(&b, "request r%d %s", r.ID, r.Kind)
		if r.Session >= 0 {
			fmt.Fprintf(&b, " x%d", r.Session)
		}
		if r.Kind == Kinds.ClaimItem {
			fmt.Fprintf(&b, " player=%d intent=%s", r.Player, r.Intent)
		}
		b.WriteByte('\n')
	}
	return engine.FormatFrame(s.Frame, textForm, b.String())
}

// parse reads the text form written by format (and by hand). Errors are
// *engine.ParseError values naming the line. The result is Validated, not
// checked against the world rules (checkWorld).
func parse(text string) (Schedule, error) {
	p := &lootParser{}
	f, err := engine.ParseFrame(text, textForm, p)
	if err != nil {
		return Schedule{}, err
	}
	p.s.Frame = f
	if len(p.s.Skews) > 0 {
		p.s.Skews = append(p.s.Skews, make([]time.Duration, max(0, f.Nodes-len(p.s.Skews)))...)
	}
	if err := validate(p.s); err != nil {
		return Schedule{}, &engine.ParseError{Msg: err.Error()}
	}
	return p.s, nil
}

type lootParser struct {
	s         Schedule
	team      bool
	lockSkew  bool
	countWins bool
	skewNodes []int
}

func (p *lootParser) Directives() []string {
	return []string{"team", "fair", "skew", "lock-skew", "count-wins", "session", "members", "bump", "request"}
}
func (p *lootParser) Msgs() int { return len(p.s.Requests) }

func (p *lootParser) Directive(line int, toks []string) error {
	args := toks[1:]
	switch toks[0] {
	case "team":
		if p.team {
			return engine.Errorf(line, "team given twice")
		}
		p.team = true
		for _, a := range args {
			n, err := strconv.ParseInt(a, 10, 64)
			if err != nil || n <= 0 {
				return engine.Errorf(line, "want team members as player ids > 0, got %q", a)
			}
			p.s.Team = append(p.s.Team, PlayerID(n))
		}
	case "fair":
		kv, _, err := engine.Fields(line, args, []string{"player", "wins"}, map[string]string{"player": "<int>", "wins": "<int>"})
		if err != nil {
			return err
		}
		pl, err1 := strconv.ParseInt(kv["player"], 10, 64)
		w, err2 := strconv.ParseInt(kv["wins"], 10, 64)
		if err1 != nil || err2 != nil || pl <= 0 || w < 0 {
			return engine.Errorf(line, "want fair player=<id > 0> wins=<int >= 0>, got %q", strings.Join(args, " "))
		}
		p.s.Fairness = append(p.s.Fairness, Fair{Player: PlayerID(pl), Wins: w})
	case "skew":
		kv, _, err := engine.Fields(line, args, []string{"node", "by"}, map[string]string{"node": "<int>", "by": "<duration>"})
		if err != nil {
			return err
		}
		n, err1 := strconv.Atoi(kv["node"])
		d, err2 := time.ParseDuration(kv["by"])
		if err1 != nil || err2 != nil || n < 0 || n >= engine.MaxNodes || (len(p.skewNodes) > 0 && n <= p.skewNodes[len(p.skewNodes)-1]) {
			return engine.Errorf(line, "want skew node=<node, increasing> by=<duration>, got %q", strings.Join(args, " "))
		}
		p.skewNodes = append(p.skewNodes, n)
		for len(p.s.Skews) <= n {
			p.s.Skews = append(p.s.Skews, 0)
		}
		p.s.Skews[n] = d
	case "lock-skew":
		kv, _, err := engine.Fields(line, args, []string{"by"}, map[string]string{"by": "<duration>"})
		if err != nil {
			return err
		}
		d, err := time.ParseDuration(kv["by"])
		if err != nil || p.lockSkew {
			return engine.Errorf(line, "want one lock-skew by=<duration>, got %q", strings.Join(args, " "))
		}
		p.lockSkew, p.s.LockSkew = true, d
	case "count-wins":
		if len(args) != 0 || p.countWins {
			return engine.Errorf(line, "want one count-wins with nothing after it, got %q", strings.Join(toks, " "))
		}
		p.countWins, p.s.CountWins = true, true
	case "session":
		return p.session(line, args)
	case "members", "bump":
		return p.ofSession(line, toks[0], args)
	case "request":
		return p.request(line, args)
	}
	return nil
}

func (p *lootParser) session(line int, args []string) error {
	kv, bare, err := engine.Fields(line, args, []string{"quantity", "deadline"}, map[string]string{"quantity": "<int>", "deadline": "<duration>", "loot": "<loot code>"})
	if err != nil {
		return err
	}
	want := fmt.Sprintf("x%d", len(p.s.Sessions))
	if len(bare) != 1 || bare[0] != want {
		return engine.Errorf(line, "want the session's id %q (sessions are declared x0, x1, ... in order), got %q", want, strings.Join(bare, " "))
	}
	q, err := strconv.Atoi(kv["quantity"])
	if err != nil || q < 1 {
		return engine.Bad(line, "quantity", "<int >= 1>", kv["quantity"])
	}
	d, err := time.ParseDuration(kv["deadline"])
	if err != nil || d < 0 || d > engine.MaxAt {
		return engine.Bad(line, "deadline", fmt.Sprintf("<duration 0..%s (MaxAt)>", engine.MaxAt), kv["deadline"])
	}
	code, ok := kv["loot"]
	if ok && code == "" {
		return engine.Bad(line, "loot", "<loot code>", code)
	}
	p.s.Sessions = append(p.s.Sessions, Session{ID: len(p.s.Sessions), Quantity: q, Deadline: d, Code: code})
	return nil
}

// ofSession reads a members or bump line: the last declared session's
// own team snapshot, or one of its fairness changes.
func (p *lootParser) ofSession(line int, dir string, args []string) error {
	want := fmt.Sprintf("x%d", len(p.s.Sessions)-1)
	if len(args) == 0 || len(p.s.Sessions) == 0 || args[0] != want {
		return engine.Errorf(line, "want %s after its session, naming it (%q), got %q", dir, want, strings.Join(args, " "))
	}
	x := &p.s.Sessions[len(p.s.Sessions)-1]
	if dir == "members" {
		if x.Members != nil {
			return engine.Errorf(line, "members of %s given twice", want)
		}
		x.Members = []PlayerID{}
		for _, a := range args[1:] {
			n, err := strconv.ParseInt(a, 10, 64)
			if err != nil || n <= 0 {
				return engine.Errorf(line, "want members as player ids > 0, got %q", a)
			}
			x.Members = append(x.Members, PlayerID(n))
		}
		return nil
	}
	kv, _, err := engine.Fields(line, args[1:], []string{"player", "wins"}, map[string]string{"player": "<int>", "wins": "<int>"})
	if err != nil {
		return err
	}
	pl, err1 := strconv.ParseInt(kv["player"], 10, 64)
	w, err2 := strconv.ParseInt(kv["wins"], 10, 64)
	if err1 != nil || err2 != nil || pl <= 0 || w <= 0 {
		return engine.Errorf(line, "want bump %s player=<id > 0> wins=<int > 0>, got %q", want, strings.Join(args[1:], " "))
	}
	x.Bumps = append(x.Bumps, Fair{Player: PlayerID(pl), Wins: w})
	return nil
}

func (p *lootParser) request(line int, args []string) error {
	kv, bare, err := engine.Fields(line, args, nil, map[string]string{"player": "<int>", "intent": "NEED|GREED|PASS"})
	if err != nil {
		return err
	}
	want := fmt.Sprintf("r%d", len(p.s.Requests))
	if len(bare) < 2 || bare[0] != want {
		return engine.Errorf(line, "want %q followed by a kind (%s) and its session, got %q", want, strings.Join(kindNames[:], ", "), strings.Join(bare, " "))
	}
	if len(p.s.Requests) == engine.MaxMsgs {
		return engine.Errorf(line, "more than %d requests (MaxMsgs)", engine.MaxMsgs)
	}
	k := slices.Index(kindNames[:], bare[1])
	if k < 0 {
		return engine.Errorf(line, "want a request kind (%s), got %q", strings.Join(kindNames[:], ", "), bare[1])
	}
	r := Request{ID: len(p.s.Requests), Kind: Kind(k), Session: -1}
	switch {
	case r.Kind == Kinds.Compensate && len(bare) != 2:
		return engine.Errorf(line, "a compensate request names no session, got %q", strings.Join(bare[2:], " "))
	case r.Kind != Kinds.Compensate:
		if len(bare) != 3 {
			return engine.Errorf(line, "want the %s request's session (e.g. x0), got %q", r.Kind, strings.Join(bare[2:], " "))
		}
		id, ok := engine.ParseID("x", bare[2])
		if !ok || id >= len(p.s.Sessions) {
			return engine.Errorf(line, "%s is not a declared session (declare sessions before the requests that name them; %d declared)", bare[2], len(p.s.Sessions))
		}
		r.Session = id
	}
	_, hasPlayer := kv["player"]
	_, hasIntent := kv["intent"]
	if r.Kind != Kinds.ClaimItem {
		if hasPlayer || hasIntent {
			return engine.Errorf(line, "only a claim has a player and an intent")
		}
	} else {
		pl, err := strconv.ParseInt(kv["player"], 10, 64)
		if !hasPlayer || err != nil || pl <= 0 {
			return engine.Bad(line, "player", "<id > 0>", kv["player"])
		}
		in := Intent(kv["intent"])
		if in.Priority() == 0 && in != Intents.Pass {
			return engine.Bad(line, "intent", "NEED|GREED|PASS", kv["intent"])
		}
		r.Player, r.Intent = PlayerID(pl), in
	}
	p.s.Requests = append(p.s.Requests, r)
	return nil
}

// validate reports the first way s is not a well-formed schedule: a known
// family, the team sorted, distinct and > 0, fairness records sorted by
// distinct players, a skew per node or none, sessions and requests with
// dense IDs in order, every request naming a session it may (a claim: a
// player and an intent; a compensate: none), and a well-formed frame
// (engine.ValidateFrame). Run panics on a schedule validate rejects;
// whether it is a world that can happen is checkWorld's business.
func validate(s Schedule) error {
	if err := validateTruth(s); err != nil {
		return err
	}
	return engine.ValidateFrame(s.Frame, messagesOf(s))
}

// validateTruth is validate without the frame, which engine.Run checks.
func validateTruth(s Schedule) error {
	if err := checkFamily(s.Family); err != nil {
		return err
	}
	for i, p := range s.Team {
		if p <= 0 || (i > 0 && p <= s.Team[i-1]) {
			return fmt.Errorf("team member %d is %d: want ids > 0, sorted, distinct", i, p)
		}
	}
	for i, f := range s.Fairness {
		if f.Player <= 0 || f.Wins < 0 || (i > 0 && f.Player <= s.Fairness[i-1].Player) {
			return fmt.Errorf("fairness record %d (player %d, %d wins): want players > 0, sorted, distinct, wins >= 0", i, f.Player, f.Wins)
		}
	}
	if len(s.Skews) != 0 && len(s.Skews) != s.Nodes {
		return fmt.Errorf("%d skews for %d nodes: want one per node, or none", len(s.Skews), s.Nodes)
	}
	if len(s.Sessions) > engine.MaxMsgs {
		return fmt.Errorf("%d sessions, over the limit of %d (MaxMsgs)", len(s.Sessions), engine.MaxMsgs)
	}
	for i, x := range s.Sessions {
		if x.ID != i || x.Quantity < 1 || x.Deadline < 0 || x.Deadline > engine.MaxAt {
			return fmt.Errorf("session %d (x%d, quantity %d, deadline %s): want IDs dense and in order, quantity >= 1, deadline 0..%s (MaxAt)", i, x.ID, x.Quantity, x.Deadline, engine.MaxAt)
		}
		if strings.ContainsFunc(x.Code, func(r rune) bool { return r <= ' ' || r == '=' }) {
			return fmt.Errorf("x%d's loot code %q: want no spaces, controls or '='", i, x.Code)
		}
		for k, p := range x.Members {
			if p <= 0 || (k > 0 && p <= x.Members[k-1]) {
				return fmt.Errorf("x%d's member %d is %d: want ids > 0, sorted, distinct", i, k, p)
			}
		}
		for k, f := range x.Bumps {
			if f.Player <= 0 || f.Wins <= 0 || (k > 0 && f.Player <= x.Bumps[k-1].Player) {
				return fmt.Errorf("x%d's fairness change %d (player %d, %d wins): want players > 0, sorted, distinct, wins > 0", i, k, f.Player, f.Wins)
			}
		}
	}
	for i, r := range s.Requests {
		switch {
		case r.ID != i:
			return fmt.Errorf("request %d has ID %d (IDs are dense and in order)", i, r.ID)
		case r.Kind > Kinds.Compensate:
			return fmt.Errorf("r%d has unknown kind %d", i, r.Kind)
		case (r.Kind == Kinds.Compensate) != (r.Session < 0), r.Session >= len(s.Sessions):
			return fmt.Errorf("r%d (%s) names session %d: a compensate names none, every other request one of x0..x%d", i, r.Kind, r.Session, len(s.Sessions)-1)
		case r.Kind == Kinds.ClaimItem && (r.Player <= 0 || (r.Intent.Priority() == 0 && r.Intent != Intents.Pass)):
			return fmt.Errorf("r%d claims as player %d with intent %q: want a player > 0 and NEED, GREED or PASS", i, r.Player, r.Intent)
		case r.Kind != Kinds.ClaimItem && (r.Player != 0 || r.Intent != ""):
			return fmt.Errorf("r%d (%s) has a player or an intent: only a claim has them", i, r.Kind)
		}
	}
	return nil
}
