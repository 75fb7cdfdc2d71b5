package lootservice

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestDefaultSpecMapsLootdsAnswers pins the default spec's reading of
// lootd's answers (api.go's apiError doc): a settle's "settled" is
// recorded, not accepted, because lootd says it with deliveries still
// unknown.
func TestDefaultSpecMapsLootdsAnswers(t *testing.T) {
	s := DefaultSpec()
	for _, c := range []struct {
		op     string
		status int
		body   string
		want   Outcome
		miss   bool
	}{
		{"open", 201, `{}`, Accepted, false},
		{"open", 200, `{}`, Already, false},
		{"claim", 200, `{"accepted":true,"created":true}`, Accepted, false},
		{"claim", 200, `{"accepted":true,"created":false}`, Already, false},
		{"claim", 404, `{"code":"not_found"}`, Refused, false},
		{"claim", 409, `{"code":"claims_closed"}`, Refused, false},
		{"settle", 200, `{"outcome":"settled"}`, Recorded, false},
		{"settle", 200, `{"outcome":"already_settled"}`, Already, false},
		{"settle", 409, `{"code":"not_due"}`, Refused, false},
		{"cancel", 200, `{}`, Accepted, false},
		{"start", 503, `{"code":"outcome_unknown"}`, Unknown, false},
		{"claim", 400, `{"code":"bad_json"}`, Unknown, true},
		{"claim", 0, ``, Unknown, false},
	} {
		got, miss := s.classify(c.op, c.status, c.body)
		if got != c.want || miss != c.miss {
			t.Errorf("%s answered %d %s: %s (unmapped %v), want %s (unmapped %v)\nTo reproduce: go test ./props/loot/service -run TestDefaultSpecMapsLootdsAnswers",
				c.op, c.status, c.body, got, miss, c.want, c.miss)
		}
	}
}

// TestBadSpecNamesTheLineAndTheField: every mistake is reported at its
// line (a missing directive at the end of the file) with the field.
func TestBadSpecNamesTheLineAndTheField(t *testing.T) {
	good := strings.Split(strings.TrimRight(DefaultSpec().Text, "\n"), "\n")
	lineOf := func(prefix string) int {
		for i, l := range good {
			if strings.HasPrefix(l, prefix) {
				return i
			}
		}
		t.Fatalf("the default spec has no line %q", prefix)
		return -1
	}
	end := len(good) // a missing directive: the line after the last
	for _, c := range []struct {
		name      string
		edit      func(lines []string) []string
		line      int
		field, in string
	}{
		{"unknown directive", func(ls []string) []string { return append(ls, "endpoint open GET /x") }, end + 1, "directive", "unknown directive"},
		{"unknown op", replace(lineOf("op open "), "op opne POST internal /api/loot/sessions"), lineOf("op open ") + 1, "op", `unknown operation "opne"`},
		{"bad method", replace(lineOf("op start "), "op start FETCH internal /x"), lineOf("op start ") + 1, "op start method", "FETCH"},
		{"bad listener", replace(lineOf("op claim "), "op claim POST players /api/loot/intent {}"), lineOf("op claim ") + 1, "op claim listener", "players"},
		{"relative path", replace(lineOf("op settle "), "op settle POST internal api/loot/settle"), lineOf("op settle ") + 1, "op settle path", "starting with /"},
		{"unknown placeholder", replace(lineOf("op cancel "), `op cancel POST internal /api/loot/cancel {"sessionNo":"{sesion}"}`), lineOf("op cancel ") + 1, "op cancel body", "{sesion}"},
		{"op twice", func(ls []string) []string { return append(ls, ls[lineOf("op open ")]) }, end + 1, "op open", "given twice"},
		{"missing op", replace(lineOf("op audit "), "# no audit"), end + 1, "op audit", "missing"},
		{"bad outcome", replace(lineOf("answer open   accepted"), "answer open accept status=201"), lineOf("answer open   accepted") + 1, "answer open outcome", `"accept"`},
		{"bad status", replace(lineOf("answer open   accepted"), "answer open accepted status=2O1"), lineOf("answer open   accepted") + 1, "answer open status", `"2O1"`},
		{"status missing", replace(lineOf("answer open   accepted"), "answer open accepted 201"), lineOf("answer open   accepted") + 1, "answer open status", "want status="},
		{"bad body match", replace(lineOf("answer claim  accepted"), "answer claim accepted status=200 created"), lineOf("answer claim  accepted") + 1, "answer claim body", "PATH=VALUE"},
		{"answer op", replace(lineOf("answer open   accepted"), "answer session accepted status=200"), lineOf("answer open   accepted") + 1, "answer op", `"session"`},
		{"unknown field", func(ls []string) []string { return append(ls, "field session.state status") }, end + 1, "field", `"session.state"`},
		{"missing field", replace(lineOf("field mine.claim"), ""), end + 1, "field mine.claim", "missing"},
		{"bad auth", replace(lineOf("auth "), "auth cookie session"), lineOf("auth ") + 1, "auth", "want"},
		{"no auth", replace(lineOf("auth "), ""), end + 1, "auth", "missing"},
		{"sql driver", func(ls []string) []string { return append(ls, "sql sqlite claims SELECT 1 WHERE x = {session}") }, end + 1, "sql driver", `"sqlite"`},
		{"sql name", func(ls []string) []string { return append(ls, "sql mysql winners SELECT 1 WHERE x = {session}") }, end + 1, "sql mysql name", `"winners"`},
		{"absent claim", replace(lineOf("op claim "), "op claim absent"), lineOf("op claim ") + 1, "op claim", "cannot be absent"},
		{"absent session, no sql session", func(ls []string) []string {
			ls[lineOf("op session ")] = "op session absent"
			return ls
		}, end + 1, "sql session", "session op is absent"},
		{"absent session, no sql grants", func(ls []string) []string {
			ls[lineOf("op session ")] = "op session absent"
			return append(ls, "sql mysql session SELECT status, deadline_at FROM loot_session WHERE session_no = {session}")
		}, end + 2, "sql grants", "session op is absent"},
		{"absent audit still given", func(ls []string) []string { return append(ls, "op audit absent") }, end + 1, "op audit", "given twice"},
		{"bad zone", func(ls []string) []string { return append(ls, "zone Asia/Shanghia") }, end + 1, "zone", `"Asia/Shanghia"`},
		{"zone twice", func(ls []string) []string { return append(ls, "zone UTC", "zone UTC") }, end + 2, "zone", "given twice"},
		{"sql unbound", replace(lineOf("sql postgres claims"), "sql postgres claims SELECT player_id FROM loot_claim"), lineOf("sql postgres claims") + 1, "sql postgres claims", "{session} once"},
	} {
		lines := c.edit(append([]string(nil), good...))
		_, err := ParseSpec("my.spec", strings.Join(lines, "\n")+"\n")
		var se *SpecError
		if !errors.As(err, &se) {
			t.Errorf("%s: err %v, want a *SpecError", c.name, err)
			continue
		}
		if se.Source != "my.spec" || se.Line != c.line || se.Field != c.field || !strings.Contains(se.Msg, c.in) {
			t.Errorf("%s: %v, want my.spec:%d: %s: ...%s...\nTo reproduce: go test ./props/loot/service -run TestBadSpecNamesTheLineAndTheField", c.name, err, c.line, c.field, c.in)
		}
	}
}

func replace(i int, with string) func([]string) []string {
	return func(ls []string) []string { ls[i] = with; return ls }
}

// TestSpecBodyTemplateIsTheRestOfTheLine: a body is taken verbatim, its
// JSON braces and spaces included, and filled.
func TestSpecBodyTemplateIsTheRestOfTheLine(t *testing.T) {
	op := DefaultSpec().Ops["claim"]
	got := fill(op.Body, map[string]string{"session": "t-x0", "intent": "NEED"})
	if want := `{"sessionNo":"t-x0","intentType":"NEED"}`; got != want {
		t.Errorf("claim body %s, want %s\nTo reproduce: go test ./props/loot/service -run TestSpecBodyTemplateIsTheRestOfTheLine", got, want)
	}
}

// TestAbsentOpsDropOnlyTheFieldsTheyAloneShow: a spec whose start, audit
// and mine are absent needs no answer rule for the start and no audit.*,
// mine.claim or claim.* field (claims are read only by the audit and mine
// reads), but session.* stay required while the session read is there.
func TestAbsentOpsDropOnlyTheFieldsTheyAloneShow(t *testing.T) {
	var kept []string
	for _, l := range strings.Split(DefaultSpec().Text, "\n") {
		if strings.HasPrefix(l, "op audit ") || strings.HasPrefix(l, "op mine ") || strings.HasPrefix(l, "op start ") ||
			strings.HasPrefix(l, "answer start ") || strings.HasPrefix(l, "field audit.") || strings.HasPrefix(l, "field mine.") || strings.HasPrefix(l, "field claim.") {
			continue
		}
		kept = append(kept, l)
	}
	kept = append(kept, "op audit absent", "op mine absent", "op start absent")
	s, err := ParseSpec("trimmed.spec", strings.Join(kept, "\n"))
	if err != nil {
		t.Fatalf("%v\nTo reproduce: go test ./props/loot/service -run TestAbsentOpsDropOnlyTheFieldsTheyAloneShow", err)
	}
	if s.Has("audit") || s.Has("mine") || s.Has("start") || !s.Has("session") {
		t.Errorf("Has: audit %v mine %v start %v session %v, want false false false true\nTo reproduce: go test ./props/loot/service -run TestAbsentOpsDropOnlyTheFieldsTheyAloneShow", s.Has("audit"), s.Has("mine"), s.Has("start"), s.Has("session"))
	}
	// The session read stays: dropping session.status is still a mistake.
	var noStatus []string
	for _, l := range kept {
		if !strings.HasPrefix(l, "field session.status") {
			noStatus = append(noStatus, l)
		}
	}
	if _, err := ParseSpec("trimmed.spec", strings.Join(noStatus, "\n")); err == nil || !strings.Contains(err.Error(), "field session.status: missing") {
		t.Errorf("no session.status with the session read present: %v, want it missing\nTo reproduce: go test ./props/loot/service -run TestAbsentOpsDropOnlyTheFieldsTheyAloneShow", err)
	}
}

// TestSpecTimeReadsAZonelessDatetimeInTheSpecsZone: a DATETIME of
// Asia/Shanghai (UTC+8, no daylight saving) is 8 hours ahead of UTC; an
// RFC 3339 time keeps its own offset.
func TestSpecTimeReadsAZonelessDatetimeInTheSpecsZone(t *testing.T) {
	s, err := ParseSpec("z.spec", DefaultSpec().Text+"zone Asia/Shanghai\n")
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for _, in := range []string{"2026-12-02 20:00:00", "2026-12-02T12:00:00Z"} {
		if got, ok := s.Time(in); !ok || !got.Equal(want) {
			t.Errorf("Time(%q) = %v %v, want %v\nTo reproduce: go test ./props/loot/service -run TestSpecTimeReadsAZonelessDatetimeInTheSpecsZone", in, got, ok, want)
		}
	}
	if got, _ := DefaultSpec().Time("2026-12-02 12:00:00"); !got.Equal(want) {
		t.Errorf("no zone given: %v, want UTC %v\nTo reproduce: go test ./props/loot/service -run TestSpecTimeReadsAZonelessDatetimeInTheSpecsZone", got, want)
	}
}
