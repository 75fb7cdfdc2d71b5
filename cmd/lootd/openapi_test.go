package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// statusCase makes one documented answer of one route happen: setup
// prepares the harness (nil: the fresh one with S1 claiming), req is the
// request. down runs it on a harness whose store and clock fail every
// call.
type statusCase struct {
	route  string // "METHOD path" as in routes
	status int
	down   bool
	setup  func(h *harness)
	method string
	path   string // on the route's listener
	body   any
	player string // X-Player-Id; "" for none
}

// big is a body over every endpoint's limit (openBody, 64 KiB).
var big = `{"sessionNo":"` + strings.Repeat("x", 70<<10) + `"}`

// settledS1 advances past S1's deadline and settles it, after 1001's claim.
func settledS1(h *harness) {
	h.claim("1001", `{"sessionNo":"S1","intentType":"NEED"}`)
	h.clock.Advance(61 * time.Second)
	if st, out := h.do("POST", h.internal.URL+"/api/loot/settle", `{"sessionNo":"S1"}`); st != 200 {
		h.t.Fatalf("settle S1: %d %v", st, out)
	}
}

func openedS2(h *harness) {
	if st, out := h.do("POST", h.internal.URL+"/api/loot/sessions", spec("S2", 1, 1001)); st != 201 {
		h.t.Fatalf("open S2: %d %v", st, out)
	}
}

var statusCases = []statusCase{
	{route: "POST /api/loot/intent", status: 200, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S1","intentType":"NEED"}`, player: "1001"},
	{route: "POST /api/loot/intent", status: 401, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S1","intentType":"NEED"}`},
	{route: "POST /api/loot/intent", status: 404, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"NOPE","intentType":"NEED"}`, player: "1001"},
	{route: "POST /api/loot/intent", status: 409, setup: openedS2, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S2","intentType":"NEED"}`, player: "1001"},
	{route: "POST /api/loot/intent", status: 400, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S1","intentType":"MAYBE"}`, player: "1001"},
	{route: "POST /api/loot/intent", status: 413, method: "POST", path: "/api/loot/intent", body: big, player: "1001"},
	{route: "POST /api/loot/intent", status: 503, down: true, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S1","intentType":"NEED"}`, player: "1001"},

	{route: "GET /api/loot/sessions/{sessionNo}/mine", status: 200, method: "GET", path: "/api/loot/sessions/S1/mine", player: "1001"},
	{route: "GET /api/loot/sessions/{sessionNo}/mine", status: 400, method: "GET", path: "/api/loot/sessions/%FF/mine", player: "1001"},
	{route: "GET /api/loot/sessions/{sessionNo}/mine", status: 401, method: "GET", path: "/api/loot/sessions/S1/mine"},
	{route: "GET /api/loot/sessions/{sessionNo}/mine", status: 404, method: "GET", path: "/api/loot/sessions/S1/mine", player: "1003"},
	{route: "GET /api/loot/sessions/{sessionNo}/mine", status: 503, down: true, method: "GET", path: "/api/loot/sessions/S1/mine", player: "1001"},

	{route: "GET /api/loot/sessions", status: 200, method: "GET", path: "/api/loot/sessions?limit=5"},
	{route: "GET /api/loot/sessions", status: 400, method: "GET", path: "/api/loot/sessions?limit=0"},
	{route: "GET /api/loot/sessions", status: 501, setup: func(h *harness) { h.be.store = unlisted{h.be.store} }, method: "GET", path: "/api/loot/sessions"},
	{route: "GET /api/loot/sessions", status: 503, down: true, method: "GET", path: "/api/loot/sessions"},

	{route: "POST /api/loot/sessions", status: 201, method: "POST", path: "/api/loot/sessions", body: spec("S3", 1, 1001)},
	{route: "POST /api/loot/sessions", status: 200, method: "POST", path: "/api/loot/sessions", body: spec("S1", 1, 1001, 1002)},
	{route: "POST /api/loot/sessions", status: 409, method: "POST", path: "/api/loot/sessions", body: spec("S1", 2, 1001, 1002)},
	{route: "POST /api/loot/sessions", status: 400, method: "POST", path: "/api/loot/sessions", body: `{"sessionNo":`},
	{route: "POST /api/loot/sessions", status: 413, method: "POST", path: "/api/loot/sessions", body: big},
	{route: "POST /api/loot/sessions", status: 503, down: true, method: "POST", path: "/api/loot/sessions", body: spec("S3", 1, 1001)},

	{route: "POST /api/loot/sessions/{sessionNo}/start", status: 200, setup: openedS2, method: "POST", path: "/api/loot/sessions/S2/start"},
	{route: "POST /api/loot/sessions/{sessionNo}/start", status: 400, method: "POST", path: "/api/loot/sessions/%FF/start"},
	{route: "POST /api/loot/sessions/{sessionNo}/start", status: 404, method: "POST", path: "/api/loot/sessions/NOPE/start"},
	{route: "POST /api/loot/sessions/{sessionNo}/start", status: 409, setup: settledS1, method: "POST", path: "/api/loot/sessions/S1/start"},
	{route: "POST /api/loot/sessions/{sessionNo}/start", status: 503, down: true, method: "POST", path: "/api/loot/sessions/S1/start"},

	{route: "GET /api/loot/sessions/{sessionNo}", status: 200, method: "GET", path: "/api/loot/sessions/S1"},
	{route: "GET /api/loot/sessions/{sessionNo}", status: 400, method: "GET", path: "/api/loot/sessions/%FF"},
	{route: "GET /api/loot/sessions/{sessionNo}", status: 404, method: "GET", path: "/api/loot/sessions/NOPE"},
	{route: "GET /api/loot/sessions/{sessionNo}", status: 503, down: true, method: "GET", path: "/api/loot/sessions/S1"},

	{route: "GET /api/loot/sessions/{sessionNo}/audit", status: 200, setup: settledS1, method: "GET", path: "/api/loot/sessions/S1/audit"},
	{route: "GET /api/loot/sessions/{sessionNo}/audit", status: 400, method: "GET", path: "/api/loot/sessions/%FF/audit"},
	{route: "GET /api/loot/sessions/{sessionNo}/audit", status: 404, method: "GET", path: "/api/loot/sessions/NOPE/audit"},
	{route: "GET /api/loot/sessions/{sessionNo}/audit", status: 503, down: true, method: "GET", path: "/api/loot/sessions/S1/audit"},

	{route: "POST /api/loot/settle", status: 200, setup: func(h *harness) { h.clock.Advance(61 * time.Second) }, method: "POST", path: "/api/loot/settle", body: `{"sessionNo":"S1"}`},
	{route: "POST /api/loot/settle", status: 404, method: "POST", path: "/api/loot/settle", body: `{"sessionNo":"NOPE"}`},
	{route: "POST /api/loot/settle", status: 409, method: "POST", path: "/api/loot/settle", body: `{"sessionNo":"S1"}`},
	{route: "POST /api/loot/settle", status: 400, method: "POST", path: "/api/loot/settle", body: `{}`},
	{route: "POST /api/loot/settle", status: 413, method: "POST", path: "/api/loot/settle", body: big},
	{route: "POST /api/loot/settle", status: 503, down: true, method: "POST", path: "/api/loot/settle", body: `{"sessionNo":"S1"}`},

	{route: "POST /api/loot/cancel", status: 200, method: "POST", path: "/api/loot/cancel", body: `{"sessionNo":"S1"}`},
	{route: "POST /api/loot/cancel", status: 404, method: "POST", path: "/api/loot/cancel", body: `{"sessionNo":"NOPE"}`},
	{route: "POST /api/loot/cancel", status: 409, setup: settledS1, method: "POST", path: "/api/loot/cancel", body: `{"sessionNo":"S1"}`},
	{route: "POST /api/loot/cancel", status: 400, method: "POST", path: "/api/loot/cancel", body: `[]`},
	{route: "POST /api/loot/cancel", status: 413, method: "POST", path: "/api/loot/cancel", body: big},
	{route: "POST /api/loot/cancel", status: 503, down: true, method: "POST", path: "/api/loot/cancel", body: `{"sessionNo":"S1"}`},

	{route: "GET /metrics", status: 200, method: "GET", path: "/metrics"},
	{route: "GET /healthz", status: 200, method: "GET", path: "/healthz"},
	{route: "GET /healthz", status: 503, down: true, method: "GET", path: "/healthz"},
	{route: "GET /readyz", status: 200, method: "GET", path: "/readyz"},
	{route: "GET /readyz", status: 503, down: true, method: "GET", path: "/readyz"},
	{route: "GET /openapi.json", status: 200, method: "GET", path: "/openapi.json"},
}

// Every status the OpenAPI document lists for a route is one its handler
// answers (a case above makes it happen), and every case's answer is one
// the document lists: the document and the handlers cannot drift apart
// unnoticed.
func TestOpenAPIStatusesAreTheHandlersAnswers(t *testing.T) {
	const rerun = "go test ./cmd/lootd -run TestOpenAPIStatusesAreTheHandlersAnswers"
	documented := map[string][]int{}
	listener := map[string]string{}
	for _, rt := range routes {
		key := rt.method + " " + rt.path
		documented[key], listener[key] = rt.statuses, rt.listener
	}
	covered := map[string]bool{}
	for _, c := range statusCases {
		name := fmt.Sprintf("%s/%d", c.route, c.status)
		t.Run(strings.NewReplacer(" ", "_", "/", "_").Replace(name), func(t *testing.T) {
			want, ok := documented[c.route]
			if !ok {
				t.Fatalf("case for %s, which routes does not have", c.route)
			}
			if !slices.Contains(want, c.status) {
				t.Fatalf("case %s: %d is not among the documented %v (%s)", c.route, c.status, want, rerun)
			}
			h := newHarness(t, func(be *backend) {
				if c.down {
					be.store = downStore{}
					be.now = func(context.Context) (time.Time, error) { return time.Time{}, errDropped }
					be.ping = func(context.Context) error { return errDropped }
				}
			})
			if !c.down {
				h.claiming(spec("S1", 1, 1001, 1002))
			}
			if c.setup != nil {
				c.setup(h)
			}
			base := h.internal.URL
			var header []string
			if listener[c.route] == playerListener {
				base = h.player.URL
			}
			if c.player != "" {
				header = []string{"X-Player-Id", c.player}
			}
			st, out := h.do(c.method, base+c.path, c.body, header...)
			if st != c.status {
				t.Errorf("%s %s: %d %v, want %d (%s)", c.method, c.path, st, out, c.status, rerun)
			}
			covered[c.route+" "+strconv.Itoa(c.status)] = true
		})
	}
	for key, sts := range documented {
		for _, st := range sts {
			if !covered[key+" "+strconv.Itoa(st)] {
				t.Errorf("%s: the document lists %d and no case answers it: add one to statusCases or remove the status (%s)", key, st, rerun)
			}
		}
	}
}

// The document is served, parses as OpenAPI 3.1 JSON, lists every route of
// both listeners with its path parameters, and refers only to schemas it
// defines.
func TestOpenAPIDocumentListsEveryRoute(t *testing.T) {
	h := newHarness(t, nil)
	resp, err := http.Get(h.internal.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc struct {
		OpenAPI    string                               `json:"openapi"`
		Paths      map[string]map[string]map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || doc.OpenAPI != "3.1.0" {
		t.Fatalf("GET /openapi.json: %d %s openapi %q", resp.StatusCode, resp.Header.Get("Content-Type"), doc.OpenAPI)
	}
	for _, rt := range routes {
		op, ok := doc.Paths[rt.path][strings.ToLower(rt.method)]
		if !ok {
			t.Errorf("%s %s is served and not in the document", rt.method, rt.path)
			continue
		}
		if n := strings.Count(rt.path, "{"); n > 0 {
			ps, _ := op["parameters"].([]any)
			var inPath int
			for _, p := range ps {
				if p.(map[string]any)["in"] == "path" {
					inPath++
				}
			}
			if inPath != n {
				t.Errorf("%s %s: %d path parameters documented, want %d", rt.method, rt.path, inPath, n)
			}
		}
	}
	var ops int
	for _, item := range doc.Paths {
		ops += len(item)
	}
	if ops != len(routes) {
		t.Errorf("the document has %d operations, routes %d", ops, len(routes))
	}
	for _, ref := range refs.FindAllStringSubmatch(string(raw), -1) {
		if _, ok := doc.Components.Schemas[ref[1]]; !ok {
			t.Errorf("$ref to %s, which components.schemas does not define", ref[1])
		}
	}
}

// A request counts under its route's pattern, never its raw path, and the
// histogram's buckets are cumulative with +Inf equal to the count.
func TestPerRouteMetricsCountByPattern(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("S1", 1, 1001))
	h.do("GET", h.internal.URL+"/api/loot/sessions/S1", nil)
	h.do("GET", h.internal.URL+"/api/loot/sessions/NOPE", nil)
	h.do("GET", h.internal.URL+"/no/such/path/123", nil)
	h.do("BREW", h.internal.URL+"/api/loot/settle", nil)
	text := metricsText(t, h)
	for _, want := range []string{
		`lootd_http_requests_total{code="200",listener="internal",method="GET",route="/api/loot/sessions/{sessionNo}"} 1`,
		`lootd_http_requests_total{code="404",listener="internal",method="GET",route="/api/loot/sessions/{sessionNo}"} 1`,
		`lootd_http_requests_total{code="201",listener="internal",method="POST",route="/api/loot/sessions"} 1`,
		`lootd_http_requests_total{code="404",listener="internal",method="GET",route="unmatched"} 1`,
		`lootd_http_requests_total{code="405",listener="internal",method="OTHER",route="/api/loot/settle"} 1`,
		`lootd_http_request_duration_seconds_count{listener="internal",method="GET",route="/api/loot/sessions/{sessionNo}"} 2`,
		`lootd_http_request_duration_seconds_bucket{listener="internal",method="GET",route="/api/loot/sessions/{sessionNo}",le="+Inf"} 2`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("GET /metrics lacks %s (go test ./cmd/lootd -run TestPerRouteMetricsCountByPattern)", want)
		}
	}
	if strings.Contains(text, "NOPE") || strings.Contains(text, "/no/such") {
		t.Errorf("a raw path became a label value: the series would grow with what clients send")
	}
	var last float64 = -1
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, `lootd_http_request_duration_seconds_bucket{`) || !strings.Contains(line, `route="/api/loot/sessions/{sessionNo}"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil || v < last {
			t.Errorf("bucket %q is not cumulative (previous %v)", line, last)
		}
		last = v
	}
}

func metricsText(t *testing.T, h *harness) string {
	t.Helper()
	_, b := get(t, h.internal.URL+"/metrics")
	return string(b)
}

var refs = regexp.MustCompile(`"\$ref": "#/components/schemas/([A-Za-z]+)"`)

// downStore fails every call as a dropped connection does: the outcome of
// each is unknown (503 outcome_unknown).
type downStore struct{}

func (downStore) Session(context.Context, string) (loot.Session, error) {
	return loot.Session{}, errDropped
}
func (downStore) Claims(context.Context, string) ([]loot.Claim, error) { return nil, errDropped }
func (downStore) Grants(context.Context, string) ([]loot.Grant, error) { return nil, errDropped }
func (downStore) Snapshot(context.Context, string) (loot.Snapshot, error) {
	return loot.Snapshot{}, errDropped
}
func (downStore) Open(context.Context, loot.Spec) (loot.Session, bool, error) {
	return loot.Session{}, false, errDropped
}
func (downStore) StartClaiming(context.Context, string) (loot.Session, error) {
	return loot.Session{}, errDropped
}
func (downStore) Claim(context.Context, string, loot.PlayerID, loot.Intent) (loot.Claim, bool, error) {
	return loot.Claim{}, false, errDropped
}
func (downStore) Cancel(context.Context, string) (loot.Session, error) {
	return loot.Session{}, errDropped
}
func (downStore) BeginSettle(context.Context, string, time.Duration) (loot.Frozen, error) {
	return loot.Frozen{}, errDropped
}
func (downStore) RecordGrants(context.Context, loot.Decision) (loot.Session, error) {
	return loot.Session{}, errDropped
}
func (downStore) MarkDelivered(context.Context, string) (loot.Grant, error) {
	return loot.Grant{}, errDropped
}
func (downStore) LeaseGrants(context.Context, int, loot.Backoff) ([]loot.Grant, error) {
	return nil, errDropped
}
func (downStore) Overdue(context.Context, int) ([]string, error) { return nil, errDropped }
func (downStore) List(context.Context, loot.ListQuery) ([]loot.Session, error) {
	return nil, errDropped
}
