package lootservice

import (
	"bufio"
	_ "embed"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Spec is how the harness talks to a service: per operation the method,
// the listener, the path and the body template; how a player is
// authenticated; how an answer maps to an Outcome; and where the read
// endpoints' JSON holds what the judge reads.
//
// Its file is a line format, not JSON, because a body template is JSON
// itself: in a JSON file it would be a string of escaped JSON, which is
// where a user's edit goes wrong; here the template is the rest of its line,
// written as the service receives it. One directive per line, '#' starts a
// comment line, fields are separated by white space:
//
//	auth header NAME TEMPLATE       the player in a header (TEMPLATE: {player})
//	auth bearer-cmd COMMAND...      Authorization: Bearer <COMMAND's output>, run once per player
//	op NAME METHOD LISTENER PATH [BODY]
//	op NAME absent                  the service has no such endpoint (start, session, audit, mine)
//	zone NAME                       the IANA zone the database's DATETIME columns are wall times of
//	answer OP OUTCOME status=CODES[,CODES] [PATH=VALUE]
//	field NAME PATH
//	sql DRIVER NAME QUERY          an auditor's read-only query (DRIVER: postgres or mysql)
//
// NAME of an op is one of Ops; LISTENER is "player" or "internal" (the
// target's two base URLs). PATH and BODY take the placeholders {session},
// {loot}, {dungeon}, {quantity}, {members} (a JSON array), {window} (claim
// window seconds), {player} and {intent}. Answer rules are tried in file
// order, the first whose op (or "*"), status and body field match decides;
// an answer no rule matches is unknown and counted as unmapped. A field
// PATH is dotted keys into a JSON object (snapshot.claims). A sql QUERY is
// the rest of its line with {session} where the session number goes (a
// bind parameter, never spliced): "claims" selects a session's claim rows
// as (player, intent, claimed at) or (player, intent, claimed at, wins),
// the wins being what the service ranks the claim with (a service with no
// audit read is judged on RuleOrder only with them, its grants taken as
// its winners), "items" the deliveries the service's
// inventory applied for it as (grant number, player); they are read only
// when the command is given the database. "session" selects the session's
// row as (status, deadline) and "grants" its grant rows as (grant number,
// player, status): a spec whose session op is absent must give both, for
// then they are the only way the judge sees the status and the grants. A
// claim's time or a deadline that a query returns as a DATETIME without a
// zone ("2006-01-02 15:04:05") is read as a wall time of the spec's zone
// (UTC unless given). Each absent op takes away what only it shows: the
// fields only it reads are not required, and Judge says which properties
// are then not judged. DefaultSpec is the file for cmd/lootd.
type Spec struct {
	// Source names where the spec came from (a file name, "default").
	Source string
	Auth   Auth
	Ops    map[string]Operation
	// Answers are the answer rules in file order.
	Answers []AnswerRule
	// Fields maps each name of FieldNames to its dotted path (or, for
	// grant.delivered, the value of grant.status that means delivered).
	Fields map[string]string
	// SQL maps a driver (postgres, mysql) to its queries by name (SQLNames).
	SQL map[string]map[string]string
	// Absent are the ops the service has no endpoint for (Optional's).
	Absent map[string]bool
	// Zone is the zone the database's zone-less times are wall times of.
	Zone *time.Location
	// Text is the spec's file, as read: a record carries it, so a replay
	// talks to the service as the run did.
	Text string
}

// Auth is how a player's request is authenticated.
type Auth struct {
	// Kind is "header" or "bearer-cmd".
	Kind string
	// Header and Template are the header's name and value ("header").
	Header, Template string
	// Command is the command that prints a player's token ("bearer-cmd";
	// its words, {player} in any of them).
	Command []string
}

// Operation is one endpoint.
type Operation struct {
	Method, Listener, Path, Body string
	Line                         int
}

// AnswerRule maps an answer to an Outcome.
type AnswerRule struct {
	Op       string // an op name or "*"
	Outcome  Outcome
	Statuses []int
	// Field and Value, when Field is set, must match the answer body's
	// field (its JSON scalar, as text).
	Field, Value string
	Line         int
}

// Outcome is what an answer says happened.
type Outcome string

// The outcomes, as lootfaults' answers name them.
const (
	Accepted Outcome = "accepted" // took effect now
	Already  Outcome = "already"  // had taken effect before
	Refused  Outcome = "refused"  // a definite no: nothing happened
	Noted    Outcome = "noted"    // acknowledged, no claim about the outcome
	Recorded Outcome = "recorded" // a settle's result recorded, items may be pending
	Unknown  Outcome = "unknown"  // not known: the sender sends again
)

var outcomes = []Outcome{Accepted, Already, Refused, Noted, Recorded, Unknown}

// Ops are the operations a spec must give: the five requests of the loot
// world a service has an endpoint for (the compensation tick is the
// service's own job, never sent) and the three reads the judge samples.
var Ops = []string{"open", "start", "claim", "settle", "cancel", "session", "audit", "mine"}

// Optional are the ops a service may lack: the start (a service that opens
// sessions straight to claiming) and the three reads (a service whose state
// only its tables show).
var Optional = []string{"start", "session", "audit", "mine"}

// readBy names, for a field, the op whose answer it is read from (a field
// of no op here is read from a request's answer or, for grant.delivered,
// from the grants either way, and is always required).
var readBy = map[string][]string{
	"session.status": {"session"}, "session.deadline": {"session"}, "session.grants": {"session"},
	"grant.player": {"session"}, "grant.no": {"session"}, "grant.status": {"session"},
	"audit.claims": {"audit"}, "audit.winners": {"audit"},
	"claim.player": {"audit", "mine"}, "claim.intent": {"audit", "mine"}, "claim.at": {"audit", "mine"}, "claim.wins": {"audit", "mine"},
	"mine.claim": {"mine"},
}

// FieldNames are the fields a spec must give.
var FieldNames = []string{
	"session.status", "session.deadline", "session.grants",
	"grant.player", "grant.no", "grant.status", "grant.delivered",
	"audit.claims", "audit.winners",
	"claim.player", "claim.intent", "claim.at", "claim.wins",
	"mine.claim",
}

// SQLNames are the auditor's queries a spec may give per driver.
var SQLNames = []string{"claims", "items", "session", "grants"}

// placeholders are the names a path or body may hold.
var placeholders = []string{"session", "loot", "dungeon", "quantity", "members", "window", "player", "intent"}

//go:embed lootd.spec
var defaultText string

// DefaultSpec is the spec of cmd/lootd (lootd.spec), with players named by
// lootd's -player-header X-Player-Id.
func DefaultSpec() Spec {
	s, err := ParseSpec("default", defaultText)
	if err != nil {
		panic("lootservice: the default spec does not parse: " + err.Error())
	}
	return s
}

// SpecError is a spec that does not parse: where, and what is wrong.
type SpecError struct {
	Source string
	Line   int
	Field  string
	Msg    string
}

func (e *SpecError) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.Source, e.Line, e.Field, e.Msg)
}

// ParseSpec parses a spec file's text; source names it in errors. The
// error is a *SpecError, at the first mistake.
func ParseSpec(source, text string) (Spec, error) {
	s := Spec{Source: source, Ops: map[string]Operation{}, Absent: map[string]bool{}, Fields: map[string]string{}, SQL: map[string]map[string]string{}, Zone: time.UTC, Text: text}
	bad := func(line int, field, format string, args ...any) error {
		return &SpecError{Source: source, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	seen := map[string]int{} // op and field names -> line
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		words := strings.Fields(line)
		switch words[0] {
		case "auth":
			if s.Auth.Kind != "" {
				return Spec{}, bad(n, "auth", "given twice (first at line %d)", seen["auth"])
			}
			seen["auth"] = n
			switch {
			case len(words) == 4 && words[1] == "header":
				s.Auth = Auth{Kind: "header", Header: words[2], Template: words[3]}
			case len(words) >= 3 && words[1] == "bearer-cmd":
				s.Auth = Auth{Kind: "bearer-cmd", Command: words[2:]}
			default:
				return Spec{}, bad(n, "auth", "want \"auth header NAME TEMPLATE\" or \"auth bearer-cmd COMMAND...\"")
			}
		case "zone":
			if len(words) != 2 {
				return Spec{}, bad(n, "zone", "want \"zone NAME\"")
			}
			if seen["zone"] != 0 {
				return Spec{}, bad(n, "zone", "given twice (first at line %d)", seen["zone"])
			}
			z, err := time.LoadLocation(words[1])
			if err != nil {
				return Spec{}, bad(n, "zone", "%q: not a time zone (%v)", words[1], err)
			}
			seen["zone"], s.Zone = n, z
		case "op":
			if len(words) == 3 && words[2] == "absent" {
				name := words[1]
				switch {
				case !slices.Contains(Optional, name):
					return Spec{}, bad(n, "op "+name, "cannot be absent (the optional operations are %s)", strings.Join(Optional, ", "))
				case seen["op "+name] != 0:
					return Spec{}, bad(n, "op "+name, "given twice (first at line %d)", seen["op "+name])
				}
				seen["op "+name] = n
				s.Absent[name] = true
				continue
			}
			if len(words) < 5 {
				return Spec{}, bad(n, "op", "want \"op NAME METHOD LISTENER PATH [BODY]\", got %d fields", len(words))
			}
			name, method, listener, path := words[1], words[2], words[3], words[4]
			switch {
			case !slices.Contains(Ops, name):
				return Spec{}, bad(n, "op", "unknown operation %q (want one of %s)", name, strings.Join(Ops, ", "))
			case seen["op "+name] != 0:
				return Spec{}, bad(n, "op "+name, "given twice (first at line %d)", seen["op "+name])
			case !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method):
				return Spec{}, bad(n, "op "+name+" method", "%q: want GET, POST, PUT, PATCH or DELETE", method)
			case listener != "player" && listener != "internal":
				return Spec{}, bad(n, "op "+name+" listener", "%q: want player or internal", listener)
			case !strings.HasPrefix(path, "/"):
				return Spec{}, bad(n, "op "+name+" path", "%q: want a path starting with /", path)
			}
			body := ""
			if len(words) > 5 {
				body = strings.TrimSpace(line[strings.Index(line, path)+len(path):])
			}
			for _, part := range []struct{ what, text string }{{"path", path}, {"body", body}} {
				if p, ok := unknownPlaceholder(part.text); !ok {
					return Spec{}, bad(n, "op "+name+" "+part.what, "unknown placeholder {%s} (want one of {%s})", p, strings.Join(placeholders, "}, {"))
				}
			}
			seen["op "+name] = n
			s.Ops[name] = Operation{Method: method, Listener: listener, Path: path, Body: body, Line: n}
		case "answer":
			r, err := parseAnswer(words, n)
			if err != nil {
				return Spec{}, bad(n, err.field, "%s", err.msg)
			}
			s.Answers = append(s.Answers, r)
		case "field":
			switch {
			case len(words) != 3:
				return Spec{}, bad(n, "field", "want \"field NAME PATH\"")
			case !slices.Contains(FieldNames, words[1]):
				return Spec{}, bad(n, "field", "unknown field %q (want one of %s)", words[1], strings.Join(FieldNames, ", "))
			case seen["field "+words[1]] != 0:
				return Spec{}, bad(n, "field "+words[1], "given twice (first at line %d)", seen["field "+words[1]])
			}
			seen["field "+words[1]] = n
			s.Fields[words[1]] = words[2]
		case "sql":
			if len(words) < 4 {
				return Spec{}, bad(n, "sql", "want \"sql DRIVER NAME QUERY\"")
			}
			driver, name := words[1], words[2]
			query := strings.TrimSpace(line[strings.Index(line, " "+name+" ")+len(name)+2:])
			switch {
			case driver != "postgres" && driver != "mysql":
				return Spec{}, bad(n, "sql driver", "%q: want postgres or mysql", driver)
			case !slices.Contains(SQLNames, name):
				return Spec{}, bad(n, "sql "+driver+" name", "%q: want one of %s", name, strings.Join(SQLNames, ", "))
			case seen["sql "+driver+" "+name] != 0:
				return Spec{}, bad(n, "sql "+driver+" "+name, "given twice (first at line %d)", seen["sql "+driver+" "+name])
			case strings.Count(query, "{session}") != 1:
				return Spec{}, bad(n, "sql "+driver+" "+name, "the query must hold {session} once, where the session number is bound")
			}
			seen["sql "+driver+" "+name] = n
			if s.SQL[driver] == nil {
				s.SQL[driver] = map[string]string{}
			}
			s.SQL[driver][name] = query
		default:
			return Spec{}, bad(n, "directive", "unknown directive %q (want auth, op, zone, answer, field or sql)", words[0])
		}
	}
	if err := sc.Err(); err != nil {
		return Spec{}, bad(n+1, "file", "%v", err)
	}
	end := n + 1 // a missing directive is reported at the end of the file
	if s.Auth.Kind == "" {
		return Spec{}, bad(end, "auth", "missing: how a player is authenticated")
	}
	for _, op := range Ops {
		if _, ok := s.Ops[op]; !ok && !s.Absent[op] {
			return Spec{}, bad(end, "op "+op, "missing (or \"op %s absent\" if the service has none)", op)
		}
	}
	for _, f := range FieldNames {
		if _, ok := s.Fields[f]; !ok && s.needs(f) {
			return Spec{}, bad(end, "field "+f, "missing")
		}
	}
	if s.Absent["session"] {
		for _, name := range []string{"session", "grants"} {
			if !slices.ContainsFunc([]string{"postgres", "mysql"}, func(d string) bool { return s.SQL[d][name] != "" }) {
				return Spec{}, bad(end, "sql "+name, "missing: the session op is absent, so the session's %s are read from the database", name)
			}
		}
	}
	for _, op := range Ops[:5] {
		if s.Absent[op] {
			continue
		}
		if !slices.ContainsFunc(s.Answers, func(r AnswerRule) bool { return r.Op == op || r.Op == "*" }) {
			return Spec{}, bad(end, "answer "+op, "missing: no answer rule for %s (every answer would be unknown)", op)
		}
	}
	return s, nil
}

// needs reports whether field f must be given: some op it is read from is
// not absent.
func (s Spec) needs(f string) bool {
	ops, ok := readBy[f]
	return !ok || slices.ContainsFunc(ops, func(op string) bool { return !s.Absent[op] })
}

// Has reports whether the service has op (it is not absent).
func (s Spec) Has(op string) bool { return !s.Absent[op] }

// Time reads a time a query or an answer returned: RFC 3339, or a
// zone-less DATETIME ("2006-01-02 15:04:05[.fraction]") as a wall time of
// the spec's zone.
func (s Spec) Time(v string) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	zone := s.Zone
	if zone == nil {
		zone = time.UTC
	}
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", v, zone)
	return t, err == nil
}

// Queries are the spec's queries for driver (postgres or mysql), each with
// {session} replaced by the driver's bind parameter; an error names a
// missing one.
func (s Spec) Queries(driver string) (map[string]string, error) {
	param := "$1"
	if driver == "mysql" {
		param = "?"
	}
	out := map[string]string{}
	for _, name := range SQLNames {
		q, ok := s.SQL[driver][name]
		if !ok && (name == "session" || name == "grants") && !s.Absent["session"] {
			continue // the session read shows them
		}
		if !ok {
			return nil, fmt.Errorf("%s: no \"sql %s %s\" query: the database cannot be read", s.Source, driver, name)
		}
		out[name] = strings.Replace(q, "{session}", param, 1)
	}
	return out, nil
}

type fieldError struct{ field, msg string }

// parseAnswer parses "answer OP OUTCOME status=CODES [PATH=VALUE]".
func parseAnswer(words []string, line int) (AnswerRule, *fieldError) {
	if len(words) < 4 || len(words) > 5 {
		return AnswerRule{}, &fieldError{"answer", "want \"answer OP OUTCOME status=CODES [PATH=VALUE]\""}
	}
	r := AnswerRule{Op: words[1], Outcome: Outcome(words[2]), Line: line}
	if r.Op != "*" && !slices.Contains(Ops[:5], r.Op) {
		return AnswerRule{}, &fieldError{"answer op", fmt.Sprintf("%q: want one of %s or *", r.Op, strings.Join(Ops[:5], ", "))}
	}
	if !slices.Contains(outcomes, r.Outcome) {
		return AnswerRule{}, &fieldError{"answer " + r.Op + " outcome", fmt.Sprintf("%q: want accepted, already, refused, noted, recorded or unknown", words[2])}
	}
	codes, ok := strings.CutPrefix(words[3], "status=")
	if !ok {
		return AnswerRule{}, &fieldError{"answer " + r.Op + " status", fmt.Sprintf("%q: want status=CODE[,CODE...]", words[3])}
	}
	for _, c := range strings.Split(codes, ",") {
		code, err := strconv.Atoi(c)
		if err != nil || code < 100 || code > 599 {
			return AnswerRule{}, &fieldError{"answer " + r.Op + " status", fmt.Sprintf("%q: want HTTP status codes 100..599", c)}
		}
		r.Statuses = append(r.Statuses, code)
	}
	if len(words) == 5 {
		f, v, ok := strings.Cut(words[4], "=")
		if !ok || f == "" {
			return AnswerRule{}, &fieldError{"answer " + r.Op + " body", fmt.Sprintf("%q: want PATH=VALUE", words[4])}
		}
		r.Field, r.Value = f, v
	}
	return r, nil
}

// unknownPlaceholder returns the first {name} in text that is not a
// placeholder (false), or true.
func unknownPlaceholder(text string) (string, bool) {
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			return "", true
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			return "", true // a JSON brace, not a placeholder
		}
		name := text[i+1 : i+j]
		if isName(name) && !slices.Contains(placeholders, name) {
			return name, false
		}
		text = text[i+1:]
	}
}

// isName reports whether s looks like a placeholder's name (so a JSON
// object's braces, which hold quotes and colons, are not taken for one).
func isName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_') {
			return false
		}
	}
	return true
}

// fill replaces the placeholders of text with vars' values.
func fill(text string, vars map[string]string) string {
	for _, p := range placeholders {
		if v, ok := vars[p]; ok {
			text = strings.ReplaceAll(text, "{"+p+"}", v)
		}
	}
	return text
}
