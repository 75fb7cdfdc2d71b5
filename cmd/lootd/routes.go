package main

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

// route is one endpoint. The listeners' muxes and the OpenAPI document
// (GET /openapi.json) are both built from routes, so a route cannot be
// served undocumented nor documented unserved; the statuses are what its
// handler can answer, which TestOpenAPIStatusesAreTheHandlersAnswers
// checks case by case.
type route struct {
	listener string // "player" or "internal"
	method   string
	path     string // a ServeMux pattern's path: {name} is a path parameter
	serve    func(*server) http.HandlerFunc
	summary  string
	// request and response are zero values of the JSON bodies (nil: none;
	// a string response is a media type other than JSON, e.g. the
	// metrics' text); the document's schemas are read off their types.
	request  any
	response any
	statuses []int // the first is the success
	query    []queryParam
}

// queryParam is a query-string parameter of a route.
type queryParam struct {
	name, format, doc string // format: an OpenAPI string format, "" for none; "integer" for a number
}

// Listeners' names, as in the metrics' listener label.
const (
	playerListener   = "player"
	internalListener = "internal"
)

// Statuses every endpoint that reaches the store can answer: the store
// did not confirm (503 outcome_unknown, with Retry-After).
var (
	bodyStatuses  = []int{400, 413} // a body that does not decode, or is too large
	storeStatuses = []int{503}
)

func statuses(groups ...[]int) []int {
	var out []int
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

var routes = []route{
	{playerListener, "POST", "/api/loot/intent", func(s *server) http.HandlerFunc { return s.intent },
		"Claim: the authenticated player declares NEED, GREED or PASS for a session they are a member of",
		intentRequest{}, claimAnswerJSON{}, statuses([]int{200, 401, 404, 409}, bodyStatuses, storeStatuses), nil},
	{playerListener, "GET", "/api/loot/sessions/{sessionNo}/mine", func(s *server) http.HandlerFunc { return s.mine },
		"The authenticated player's own claim and grant in a session",
		nil, mineJSON{}, statuses([]int{200, 400, 401, 404}, storeStatuses), nil},

	{internalListener, "GET", "/api/loot/sessions", func(s *server) http.HandlerFunc { return s.list },
		"List sessions in (deadline, sessionNo) order, filtered by status and deadline, paged by cursor",
		nil, listJSON{}, statuses([]int{200, 400, 501}, storeStatuses), []queryParam{
			{"status", "", "keep only sessions in this status: OPEN, CLAIMING, SETTLING, CLOSED or CANCELED"},
			{"deadlineFrom", "date-time", "keep deadlines at or after this RFC 3339 time"},
			{"deadlineTo", "date-time", "keep deadlines before this RFC 3339 time"},
			{"limit", "integer", "page size, 1..100 (default 20)"},
			{"after", "", "the previous page's next: the rows after it"},
		}},
	{internalListener, "POST", "/api/loot/sessions", func(s *server) http.HandlerFunc { return s.open },
		"Open a session (201; a repeat of the same definition is 200 with the recorded session)",
		openRequest{}, sessionJSON{}, statuses([]int{201, 200, 409}, bodyStatuses, storeStatuses), nil},
	{internalListener, "POST", "/api/loot/sessions/{sessionNo}/start", func(s *server) http.HandlerFunc { return s.start },
		"Start claiming: OPEN -> CLAIMING (a repeat is 200)",
		nil, sessionJSON{}, statuses([]int{200, 400, 404, 409}, storeStatuses), nil},
	{internalListener, "GET", "/api/loot/sessions/{sessionNo}", func(s *server) http.HandlerFunc { return s.session },
		"A session with its claim count and grants",
		nil, sessionJSON{}, statuses([]int{200, 400, 404}, storeStatuses), nil},
	{internalListener, "GET", "/api/loot/sessions/{sessionNo}/audit", func(s *server) http.HandlerFunc { return s.audit },
		"The audit snapshot, and whether it replays to the recorded winners",
		nil, auditJSON{}, statuses([]int{200, 400, 404}, storeStatuses), nil},
	{internalListener, "POST", "/api/loot/settle", func(s *server) http.HandlerFunc { return s.settleHandler },
		"Settle a session whose deadline passed (outcome settled, or already_settled with the recorded result)",
		sessionRequest{}, settleJSON{}, statuses([]int{200, 404, 409}, bodyStatuses, storeStatuses), nil},
	{internalListener, "POST", "/api/loot/cancel", func(s *server) http.HandlerFunc { return s.cancel },
		"Cancel a session that is not over (a repeat is 200; a CLOSED session is 409: its grants stand)",
		sessionRequest{}, sessionJSON{}, statuses([]int{200, 404, 409}, bodyStatuses, storeStatuses), nil},
	{internalListener, "GET", "/metrics", func(s *server) http.HandlerFunc { return s.m.handler().ServeHTTP },
		"Prometheus metrics", nil, "text/plain", []int{200}, nil},
	{internalListener, "GET", "/healthz", func(s *server) http.HandlerFunc { return s.healthz },
		"Liveness: the store answers", nil, healthJSON{}, []int{200, 503}, nil},
	{internalListener, "GET", "/readyz", func(s *server) http.HandlerFunc { return s.readyz },
		"Readiness: the store answers, and the settle lock's state", nil, healthJSON{}, []int{200, 503}, nil},
	{internalListener, "GET", "/openapi.json", func(s *server) http.HandlerFunc { return s.serveOpenAPI },
		"This document", nil, "application/json", []int{200}, nil},
}

// handler is listener's mux: its routes, each counted and timed
// (metrics.instrument), a JSON 405 naming the methods a path is served
// with, and a JSON 404 for any other path.
func (s *server) handler(listener string) http.Handler {
	mux := http.NewServeMux()
	byPath := map[string]map[string]http.HandlerFunc{}
	for _, rt := range routes {
		if rt.listener != listener {
			continue
		}
		if byPath[rt.path] == nil {
			byPath[rt.path] = map[string]http.HandlerFunc{}
		}
		byPath[rt.path][rt.method] = rt.serve(s)
	}
	for _, path := range slices.Sorted(maps.Keys(byPath)) {
		hs := byPath[path]
		methods := slices.Sorted(maps.Keys(hs))
		for _, m := range methods {
			mux.Handle(m+" "+path, s.m.instrument(listener, m, path, hs[m]))
		}
		allow := strings.Join(methods, ", ")
		mux.Handle(path, s.m.instrument(listener, "", path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, &apiError{status: http.StatusMethodNotAllowed, Code: "method_not_allowed", Message: r.Method + " " + r.URL.Path + ": use " + allow})
		}))
	}
	mux.Handle("/", s.m.instrument(listener, "", unmatchedRoute, notFound))
	return mux
}

// unmatchedRoute is the route label of requests no route matched: one
// series for all of them, whatever the path (a label per raw path would
// let any client grow the metrics without bound).
const unmatchedRoute = "unmatched"

// playerHandler is the player-facing listener's: the claim, and the
// player's read of their own claim and grant. The player claims with
// {"sessionNo","intentType"}: a body with playerId is 400.
func (s *server) playerHandler() http.Handler { return s.handler(playerListener) }

// internalHandler is the operations listener's: opens, starts, settles,
// cancels, the reads, /metrics, /healthz, /readyz and /openapi.json. Never
// expose it to players.
func (s *server) internalHandler() http.Handler { return s.handler(internalListener) }

func notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, &apiError{status: http.StatusNotFound, Code: "no_route", Message: "no endpoint " + r.Method + " " + r.URL.Path + " on this listener"})
}
