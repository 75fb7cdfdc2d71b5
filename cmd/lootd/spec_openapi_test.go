package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

// lootd's API is described twice: by the service mode's default spec
// (props/loot/service/lootd.spec, how onceproof service talks to lootd and
// reads its answers) and by GET /openapi.json (built from routes). These
// tests hold the spec to the document, so a route renamed or a status
// changed in lootd fails here instead of turning service mode's answers
// into unmapped unknowns.

// openAPIOp is what the check reads of one operation of the document.
type openAPIOp struct {
	Tags      []string       `json:"tags"`
	Responses map[string]any `json:"responses"`
}

// anyParam matches a path parameter: the spec names them by its
// placeholders ({session}), the document by the handlers' ({sessionNo}).
var anyParam = regexp.MustCompile(`\{[^}]*\}`)

// specDrift lists where spec says something of lootd that doc (the decoded
// paths of GET /openapi.json) does not:
//   - every op's method and path (parameters compared by position) is an
//     operation of doc, tagged with the op's listener;
//   - every status an op's own answer rule maps is one doc lists for it;
//   - every status a "*" rule maps to a definite outcome (anything but
//     unknown) is one doc lists for some op of the spec: a refusal mapped
//     for a status lootd never answers is a description of another
//     service. A "*" unknown may name statuses no op lists (a proxy's 502,
//     504): unknown only makes the driver resend, which is always safe;
//   - every 2xx doc lists for a request (an op that is not a GET: the GETs
//     are the judge's reads, whose bodies it reads, not answer rules) is
//     mapped by a rule of the op or "*", or the driver would count lootd's
//     success as an unmapped unknown.
func specDrift(spec lootservice.Spec, doc map[string]map[string]openAPIOp) []string {
	byShape := map[string]string{} // path with {} parameters -> doc's path
	for p := range doc {
		byShape[anyParam.ReplaceAllString(p, "{}")] = p
	}
	var drift []string
	ops := map[string]openAPIOp{}
	for _, name := range lootservice.Ops {
		sop := spec.Ops[name]
		p, ok := byShape[anyParam.ReplaceAllString(sop.Path, "{}")]
		dop, okm := doc[p][strings.ToLower(sop.Method)]
		if !ok || !okm {
			drift = append(drift, fmt.Sprintf("line %d: op %s %s %s is not an operation of lootd's document", sop.Line, name, sop.Method, sop.Path))
			continue
		}
		if !slices.Contains(dop.Tags, sop.Listener) {
			drift = append(drift, fmt.Sprintf("line %d: op %s %s %s: the spec says listener %s, the document %v", sop.Line, name, sop.Method, sop.Path, sop.Listener, dop.Tags))
		}
		ops[name] = dop
	}
	for _, r := range spec.Answers {
		for _, st := range r.Statuses {
			code := strconv.Itoa(st)
			if r.Op != "*" {
				if dop, ok := ops[r.Op]; ok && dop.Responses[code] == nil {
					drift = append(drift, fmt.Sprintf("line %d: answer %s %s status=%d: lootd's document lists %v for %s", r.Line, r.Op, r.Outcome, st, slices.Sorted(maps.Keys(dop.Responses)), r.Op))
				}
				continue
			}
			if r.Outcome == lootservice.Unknown {
				continue
			}
			documented := false
			for _, dop := range ops {
				documented = documented || dop.Responses[code] != nil
			}
			if !documented {
				drift = append(drift, fmt.Sprintf("line %d: answer * %s status=%d: no op of the spec answers %d in lootd's document", r.Line, r.Outcome, st, st))
			}
		}
	}
	for _, name := range lootservice.Ops {
		dop, ok := ops[name]
		if !ok || spec.Ops[name].Method == "GET" {
			continue
		}
		for code := range dop.Responses {
			st, err := strconv.Atoi(code)
			if err != nil || st < 200 || st > 299 {
				continue
			}
			mapped := slices.ContainsFunc(spec.Answers, func(r lootservice.AnswerRule) bool {
				return (r.Op == name || r.Op == "*") && slices.Contains(r.Statuses, st)
			})
			if !mapped {
				drift = append(drift, fmt.Sprintf("op %s: lootd answers %d (its document) and no answer rule maps it", name, st))
			}
		}
	}
	slices.Sort(drift)
	return drift
}

// servedDocument is lootd's GET /openapi.json, decoded to what specDrift
// reads.
func servedDocument(t *testing.T) map[string]map[string]openAPIOp {
	t.Helper()
	status, raw := get(t, newHarness(t, nil).internal.URL+"/openapi.json")
	var doc struct {
		Paths map[string]map[string]openAPIOp `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || status != 200 {
		t.Fatalf("GET /openapi.json: %d %v", status, err)
	}
	return doc.Paths
}

// get is url's status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// The default spec (the one onceproof service uses for lootd) says nothing
// of lootd's API that lootd's own document does not.
func TestDefaultSpecMatchesTheOpenAPIDocument(t *testing.T) {
	const rerun = "go test -count=1 -run TestDefaultSpecMatchesTheOpenAPIDocument ./cmd/lootd"
	spec := lootservice.DefaultSpec()
	for _, d := range specDrift(spec, servedDocument(t)) {
		t.Errorf("props/loot/service/lootd.spec %s (%s)", d, rerun)
	}
}

// specDrift sees each kind of drift: the default spec with one line
// changed as lootd might change under it is reported at that line.
func TestSpecDriftIsFound(t *testing.T) {
	const rerun = "go test -count=1 -run TestSpecDriftIsFound ./cmd/lootd"
	doc := servedDocument(t)
	text := lootservice.DefaultSpec().Text
	for _, c := range []struct{ name, old, new, want string }{
		{"a path renamed", "/api/loot/sessions/{session}/start", "/api/loot/session/{session}/start", "op start POST /api/loot/session/{session}/start is not an operation"},
		{"a method changed", "op cancel  POST", "op cancel  PUT", "op cancel PUT /api/loot/cancel is not an operation"},
		{"a listener swapped", "op mine    GET  player", "op mine    GET  internal", "op mine GET /api/loot/sessions/{session}/mine: the spec says listener internal"},
		{"a status lootd does not answer", "answer open   accepted status=201", "answer open   accepted status=202", "answer open accepted status=202"},
		{"a refusal no op answers", "refused  status=404,409", "refused  status=404,409,410", "answer * refused status=410"},
		{"a success unmapped", "answer open   accepted status=201", "answer open   accepted status=200", "op open: lootd answers 201"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(text, c.old) {
				t.Fatalf("lootd.spec no longer holds %q: update this case (%s)", c.old, rerun)
			}
			spec, err := lootservice.ParseSpec("mutated", strings.Replace(text, c.old, c.new, 1))
			if err != nil {
				t.Fatal(err)
			}
			drift := specDrift(spec, doc)
			if !slices.ContainsFunc(drift, func(d string) bool { return strings.Contains(d, c.want) }) {
				t.Errorf("%q -> %q: drift %q, want one containing %q (%s)", c.old, c.new, drift, c.want, rerun)
			}
		})
	}
}
