package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// The handlers in process, on the memory backend with a clock the test
// moves: every refusal's status and code, and that a refused request
// wrote nothing. The e2e tests run the same handlers in real processes.

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testKey is the token key of every in-process server (>= minKeyLen).
var testKey = []byte("0123456789abcdef0123456789abcdef")

type harness struct {
	t        *testing.T
	clock    *memory.Clock
	be       *backend
	srv      *server
	player   *httptest.Server
	internal *httptest.Server
}

// newHarness serves a memory backend, changed by adjust if given,
// trusting X-Player-Id and tokens under testKey.
func newHarness(t *testing.T, adjust func(*backend)) *harness {
	t.Helper()
	h := &harness{t: t, clock: memory.NewClock(t0)}
	h.be = memoryBackendAt(h.clock.Now)
	if adjust != nil {
		adjust(h.be)
	}
	auth := &authenticator{header: "X-Player-Id", key: testKey, now: h.clock.Now}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := newServer(h.be, auth, 10*time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	h.srv = srv
	h.player = httptest.NewServer(srv.playerHandler())
	h.internal = httptest.NewServer(srv.internalHandler())
	t.Cleanup(h.player.Close)
	t.Cleanup(h.internal.Close)
	return h
}

// do sends body (a string, or a value to encode) and returns the status
// and the decoded JSON answer.
func (h *harness) do(method, url string, body any, header ...string) (int, map[string]any) {
	h.t.Helper()
	status, _, out := send(h.t, http.DefaultClient, method, url, body, header...)
	return status, out
}

func send(t testing.TB, c *http.Client, method, url string, body any, header ...string) (int, http.Header, map[string]any) {
	t.Helper()
	req := newRequest(t, method, url, body)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, resp.Header, out
}

// newRequest is a JSON request with body: nil, a string sent as it is, or
// a value to encode.
func newRequest(t testing.TB, method, url string, body any) *http.Request {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func spec(no string, quantity int, members ...int64) openRequest {
	return openRequest{SessionNo: no, DungeonCode: "ABYSS-3", LootCode: "SWORD_001", Quantity: quantity, Members: members, ClaimWindowSeconds: 60}
}

// claiming opens and starts a session.
func (h *harness) claiming(s openRequest) {
	h.t.Helper()
	if st, out := h.do("POST", h.internal.URL+"/api/loot/sessions", s); st != 201 {
		h.t.Fatalf("open %s: %d %v", s.SessionNo, st, out)
	}
	if st, out := h.do("POST", h.internal.URL+"/api/loot/sessions/"+s.SessionNo+"/start", nil); st != 200 {
		h.t.Fatalf("start %s: %d %v", s.SessionNo, st, out)
	}
}

func (h *harness) claim(player, body string) (int, map[string]any) {
	h.t.Helper()
	return h.do("POST", h.player.URL+"/api/loot/intent", body, "X-Player-Id", player)
}

func wantError(t *testing.T, what string, status int, out map[string]any, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus || out["code"] != wantCode {
		t.Errorf("%s: got %d %v, want %d code %q", what, status, out, wantStatus, wantCode)
	}
	if msg, _ := out["message"].(string); msg == "" || strings.Contains(msg, "\n") {
		t.Errorf("%s: message %q, want one non-empty line", what, msg)
	}
}

func TestIntentRefusesBadInputWithStableCodesAndWritesNothing(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("S1", 1, 1001, 1002))
	cases := []struct {
		name, player, body string
		status             int
		code               string
	}{
		{"malformed", "1001", `{"sessionNo":"S1",`, 400, "bad_json"},
		{"not an object", "1001", `["S1","NEED"]`, 400, "bad_json"},
		{"empty", "1001", ``, 400, "bad_json"},
		{"two values", "1001", `{"sessionNo":"S1","intentType":"NEED"}{}`, 400, "bad_json"},
		{"unknown field", "1001", `{"sessionNo":"S1","intentType":"NEED","priority":10}`, 400, "unknown_field"},
		{"wrong type", "1001", `{"sessionNo":202401,"intentType":"NEED"}`, 400, "wrong_type"},
		{"player in body", "1001", `{"sessionNo":"S1","playerId":1002,"intentType":"NEED"}`, 400, "player_in_body"},
		{"player in body, other case", "1001", `{"sessionNo":"S1","PlayerID":"1002","intentType":"PASS"}`, 400, "player_in_body"},
		{"player null in body", "1001", `{"sessionNo":"S1","playerId":null,"intentType":"NEED"}`, 400, "player_in_body"},
		{"fair score in body", "1001", `{"sessionNo":"S1","intentType":"NEED","fairScore":-100}`, 400, "fair_score_in_body"},
		{"no session", "1001", `{"intentType":"NEED"}`, 400, "missing_field"},
		{"wrong intent", "1001", `{"sessionNo":"S1","intentType":"ROLL"}`, 400, "bad_intent"},
		{"no intent", "1001", `{"sessionNo":"S1"}`, 400, "bad_intent"},
		{"oversized", "1001", `{"sessionNo":"` + strings.Repeat("S", smallBody) + `","intentType":"NEED"}`, 413, "body_too_large"},
		{"session number longer than any", "1001", `{"sessionNo":"` + strings.Repeat("S", loot.MaxCodeLen+1) + `","intentType":"NEED"}`, 400, "bad_argument"},
		{"unknown session", "1001", `{"sessionNo":"S404","intentType":"NEED"}`, 404, "not_found"},
		{"not a member", "1003", `{"sessionNo":"S1","intentType":"NEED"}`, 404, "not_found"}, // as unknown, to players
		{"no player", "", `{"sessionNo":"S1","intentType":"NEED"}`, 401, "unauthenticated"},
		{"player not a number", "10O1", `{"sessionNo":"S1","intentType":"NEED"}`, 401, "unauthenticated"},
		{"player zero", "0", `{"sessionNo":"S1","intentType":"NEED"}`, 401, "unauthenticated"},
	}
	for _, c := range cases {
		st, out := h.claim(c.player, c.body)
		wantError(t, c.name, st, out, c.status, c.code)
	}
	cs, err := h.be.store.Claims(t.Context(), "S1")
	if err != nil || len(cs) != 0 {
		t.Fatalf("claims after refused requests: %v, %v; want none", cs, err)
	}
	if st, out := h.claim("1001", `{"sessionNo":"S1","intentType":"NEED"}`); st != 200 || out["accepted"] != true || out["playerId"] != 1001.0 {
		t.Fatalf("valid claim: %d %v", st, out)
	}
}

func TestIntentFollowsTheSessionState(t *testing.T) {
	h := newHarness(t, nil)
	if st, _ := h.do("POST", h.internal.URL+"/api/loot/sessions", spec("OPEN-1", 1, 1001)); st != 201 {
		t.Fatal(st)
	}
	st, out := h.claim("1001", `{"sessionNo":"OPEN-1","intentType":"NEED"}`)
	wantError(t, "claim before start", st, out, 409, "claims_closed")

	h.claiming(spec("CANCEL-1", 1, 1001))
	if st, out := h.do("POST", h.internal.URL+"/api/loot/cancel", `{"sessionNo":"CANCEL-1"}`); st != 200 || out["status"] != "CANCELED" {
		t.Fatalf("cancel: %d %v", st, out)
	}
	st, out = h.claim("1001", `{"sessionNo":"CANCEL-1","intentType":"NEED"}`)
	wantError(t, "claim in a canceled session", st, out, 409, "canceled")

	h.claiming(spec("LATE-1", 1, 1001))
	h.clock.Advance(60 * time.Second) // the deadline, by the store's clock
	st, out = h.claim("1001", `{"sessionNo":"LATE-1","intentType":"NEED"}`)
	wantError(t, "claim at the deadline", st, out, 409, "claims_closed")
}

func TestPlayerListenerServesOnlyTheClaim(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("S1", 1, 1001))
	for _, r := range []struct{ method, path, body string }{
		{"POST", "/api/loot/settle", `{"sessionNo":"S1"}`},
		{"POST", "/api/loot/cancel", `{"sessionNo":"S1"}`},
		{"POST", "/api/loot/sessions", `{}`},
		{"POST", "/api/loot/sessions/S1/start", ``},
		{"GET", "/api/loot/sessions/S1", ``},
		{"GET", "/api/loot/sessions/S1/audit", ``},
		{"GET", "/metrics", ``},
		{"GET", "/healthz", ``},
	} {
		st, out := h.do(r.method, h.player.URL+r.path, r.body, "X-Player-Id", "1001")
		wantError(t, r.method+" "+r.path+" on the player listener", st, out, 404, "no_route")
	}
	st, hdr, out := send(t, http.DefaultClient, "GET", h.player.URL+"/api/loot/intent", nil, "X-Player-Id", "1001")
	wantError(t, "GET of the claim", st, out, 405, "method_not_allowed")
	if hdr.Get("Allow") != "POST" {
		t.Errorf("Allow %q, want POST", hdr.Get("Allow"))
	}
	st, _, out = send(t, http.DefaultClient, "DELETE", h.internal.URL+"/api/loot/sessions/S1", nil)
	wantError(t, "DELETE of a session", st, out, 405, "method_not_allowed")
	st, hdr, out = send(t, http.DefaultClient, "DELETE", h.internal.URL+"/api/loot/sessions", nil)
	wantError(t, "DELETE of the sessions", st, out, 405, "method_not_allowed")
	if hdr.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q on /api/loot/sessions, want GET, POST (the list and the open)", hdr.Get("Allow"))
	}
	if s, _ := h.be.store.Session(t.Context(), "S1"); s.Status != loot.StatusClaiming {
		t.Fatalf("session is %s after the player's attempts, want CLAIMING", s.Status)
	}
}

func TestOpenIsIdempotentAndRefusesBadSpecs(t *testing.T) {
	h := newHarness(t, nil)
	url := h.internal.URL + "/api/loot/sessions"
	st, first := h.do("POST", url, spec("S1", 2, 1003, 1001, 1002))
	if st != 201 || first["status"] != "OPEN" || first["ruleVersion"] != string(loot.RuleCount) {
		t.Fatalf("open: %d %v", st, first)
	}
	if want := t0.Add(60 * time.Second).Format(time.RFC3339Nano); first["deadline"] != want {
		t.Errorf("deadline %v, want the store's now + 60s = %s", first["deadline"], want)
	}
	h.clock.Advance(time.Second) // a retry computes another deadline
	st, again := h.do("POST", url, spec("S1", 2, 1001, 1002, 1003))
	if st != 200 || again["deadline"] != first["deadline"] || again["openedAt"] != first["openedAt"] {
		t.Fatalf("repeated open: %d %v, want the recorded session %v", st, again, first)
	}
	st, out := h.do("POST", url, spec("S1", 3, 1001, 1002, 1003))
	wantError(t, "same number, other quantity", st, out, 409, "conflict")

	tooMany := spec("S2", 1)
	for i := range maxMembers + 1 {
		tooMany.Members = append(tooMany.Members, int64(i+1))
	}
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"window 0", func() openRequest { s := spec("S2", 1, 1); s.ClaimWindowSeconds = 0; return s }(), 400, "bad_argument"},
		{"window over a day", func() openRequest { s := spec("S2", 1, 1); s.ClaimWindowSeconds = 86401; return s }(), 400, "bad_argument"},
		{"quantity 0", spec("S2", 0, 1), 400, "bad_argument"},
		{"no members", spec("S2", 1), 400, "bad_argument"},
		{"member 0", spec("S2", 1, 1, 0), 400, "bad_argument"},
		{"member twice", spec("S2", 1, 7, 7), 400, "bad_argument"},
		{"too many members", tooMany, 400, "bad_argument"},
		{"colon in the number", spec("S:2", 1, 1), 400, "bad_argument"},
		{"members as strings", `{"sessionNo":"S2","dungeonCode":"D","lootCode":"L","quantity":1,"members":["1001"],"claimWindowSeconds":60}`, 400, "wrong_type"},
		{"fractional quantity", `{"sessionNo":"S2","dungeonCode":"D","lootCode":"L","quantity":1.5,"members":[1],"claimWindowSeconds":60}`, 400, "wrong_type"},
		{"rule from the caller", `{"sessionNo":"S2","dungeonCode":"D","lootCode":"L","quantity":1,"members":[1],"claimWindowSeconds":60,"ruleVersion":"v2-seeded"}`, 400, "unknown_field"},
	} {
		st, out := h.do("POST", url, c.body)
		wantError(t, c.name, st, out, c.status, c.code)
	}
	if _, err := h.be.store.Session(t.Context(), "S2"); !errors.Is(err, loot.ErrNotFound) {
		t.Fatalf("S2 after refused opens: %v, want not found", err)
	}
}

func TestSettleAndCancelAnswerByState(t *testing.T) {
	h := newHarness(t, nil)
	settle := func(no string) (int, map[string]any) {
		return h.do("POST", h.internal.URL+"/api/loot/settle", `{"sessionNo":"`+no+`"}`)
	}
	cancel := func(no string) (int, map[string]any) {
		return h.do("POST", h.internal.URL+"/api/loot/cancel", `{"sessionNo":"`+no+`"}`)
	}
	h.claiming(spec("S1", 1, 1001, 1002))
	for _, p := range []string{"1001", "1002"} {
		if st, out := h.claim(p, `{"sessionNo":"S1","intentType":"NEED"}`); st != 200 {
			t.Fatalf("claim by %s: %d %v", p, st, out)
		}
	}
	st, out := settle("S1")
	wantError(t, "settle before the deadline", st, out, 409, "not_due")
	h.clock.Advance(60 * time.Second)
	st, out = settle("S1")
	sess, _ := out["session"].(map[string]any)
	if st != 200 || out["outcome"] != "settled" || sess["status"] != "CLOSED" {
		t.Fatalf("settle: %d %v", st, out)
	}
	if st, read := h.do("GET", h.internal.URL+"/api/loot/sessions/S1", nil); st != 200 || read["claims"] != 2.0 || read["fence"] != 1.0 {
		t.Fatalf("GET session: %d %v", st, read)
	}
	grants, _ := sess["grants"].([]any)
	if len(grants) != 1 || grants[0].(map[string]any)["grantNo"] != "S1:1001:SWORD_001" || grants[0].(map[string]any)["status"] != "SUCCESS" {
		t.Fatalf("grants %v, want S1:1001:SWORD_001 delivered (same wins, earlier claim)", grants)
	}
	if st, out = settle("S1"); st != 200 || out["outcome"] != "already_settled" {
		t.Fatalf("repeated settle: %d %v", st, out)
	}
	st, out = cancel("S1")
	wantError(t, "cancel a closed session", st, out, 409, "already_settled")
	st, out = settle("NOPE")
	wantError(t, "settle an unknown session", st, out, 404, "not_found")
	st, out = settle("")
	wantError(t, "settle without a number", st, out, 400, "missing_field")

	h.claiming(spec("S2", 1, 1001))
	for range 2 {
		if st, out := cancel("S2"); st != 200 || out["status"] != "CANCELED" {
			t.Fatalf("cancel (and its repeat): %d %v", st, out)
		}
	}
	h.clock.Advance(60 * time.Second)
	st, out = settle("S2")
	wantError(t, "settle a canceled session", st, out, 409, "canceled")
	st, out = h.do("GET", h.internal.URL+"/api/loot/sessions/S2/audit", nil)
	wantError(t, "audit a canceled session", st, out, 409, "canceled")
	st, out = h.do("GET", h.internal.URL+"/api/loot/sessions/NOPE", nil)
	wantError(t, "read an unknown session", st, out, 404, "not_found")
}

// failingStore answers every call with an error that is no loot sentinel:
// a dropped connection, outcome unknown.
type failingStore struct {
	loot.Store
	fail bool
}

var errDropped = errors.New("read tcp 10.0.0.7:3306: connection reset by peer")

func (s *failingStore) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	if s.fail {
		return loot.Claim{}, false, errDropped
	}
	return s.Store.Claim(ctx, no, p, in)
}

func TestUnknownStoreOutcomeIs503WithRetryAfterAndNoCause(t *testing.T) {
	fs := &failingStore{}
	h := newHarness(t, func(be *backend) { fs.Store, be.store = be.store, fs })
	h.claiming(spec("S1", 1, 1001))
	fs.fail = true
	st, hdr, out := send(t, http.DefaultClient, "POST", h.player.URL+"/api/loot/intent", `{"sessionNo":"S1","intentType":"NEED"}`, "X-Player-Id", "1001")
	wantError(t, "claim on a dropped connection", st, out, 503, "outcome_unknown")
	if hdr.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q, want 1", hdr.Get("Retry-After"))
	}
	if msg := out["message"].(string); strings.Contains(msg, "10.0.0.7") {
		t.Errorf("message %q leaks the cause to the client", msg)
	}
	fs.fail = false
	if st, out := h.claim("1001", `{"sessionNo":"S1","intentType":"NEED"}`); st != 200 {
		t.Fatalf("the retry: %d %v", st, out)
	}
}

// tamperedStore returns snapshots whose winners were edited after the
// fact.
type tamperedStore struct{ loot.Store }

func (s tamperedStore) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	snap, err := s.Store.Snapshot(ctx, no)
	snap.Winners = []loot.PlayerID{1002}
	return snap, err
}

func TestAuditSaysWhetherTheSnapshotReplays(t *testing.T) {
	for _, tamper := range []bool{false, true} {
		h := newHarness(t, func(be *backend) {
			if tamper {
				be.store = tamperedStore{be.store}
			}
		})
		h.claiming(spec("S1", 1, 1001, 1002))
		h.claim("1001", `{"sessionNo":"S1","intentType":"NEED"}`)
		h.claim("1002", `{"sessionNo":"S1","intentType":"GREED"}`)
		st, out := h.do("GET", h.internal.URL+"/api/loot/sessions/S1/audit", nil)
		wantError(t, "audit before settling", st, out, 409, "not_due")
		h.clock.Advance(time.Minute)
		if st, out := h.do("POST", h.internal.URL+"/api/loot/settle", `{"sessionNo":"S1"}`); st != 200 {
			t.Fatalf("settle: %d %v", st, out)
		}
		st, out = h.do("GET", h.internal.URL+"/api/loot/sessions/S1/audit", nil)
		snap, _ := out["snapshot"].(map[string]any)
		if st != 200 || out["replays"] != !tamper || snap["claimsHash"] == "" || len(snap["claims"].([]any)) != 2 {
			t.Fatalf("audit (tampered %v): %d %v", tamper, st, out)
		}
		if tamper && out["finding"] != "winners" {
			t.Errorf("tampered audit's finding %v, want winners", out["finding"])
		}
	}
}

func TestTokensAuthenticateAndHeaderModeIsOptIn(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("S1", 1, 1001, 1002))
	body := `{"sessionNo":"S1","intentType":"NEED"}`
	url := h.player.URL + "/api/loot/intent"
	good := mintToken(testKey, 1002, t0.Add(time.Hour))
	if st, out := h.do("POST", url, body, "Authorization", "Bearer "+good); st != 200 || out["playerId"] != 1002.0 {
		t.Fatalf("valid token: %d %v", st, out)
	}
	forged := mintToken([]byte("another key, just as long as it is"), 1001, t0.Add(time.Hour))
	other := strings.Replace(good, "v1.1002.", "v1.1001.", 1) // signature of 1002 on 1001
	expired := mintToken(testKey, 1001, t0.Add(-time.Second))
	for name, auth := range map[string]string{
		"forged": "Bearer " + forged, "player swapped": "Bearer " + other, "expired": "Bearer " + expired,
		"not bearer": "Basic " + good, "garbage": "Bearer x",
	} {
		// A token that fails is refused even with the gateway header set:
		// the token is what the request claims to be.
		st, out := h.do("POST", url, body, "Authorization", auth, "X-Player-Id", "1001")
		wantError(t, name, st, out, 401, "unauthenticated")
	}

	// Only tokens configured: the header means nothing.
	h.srv.auth = &authenticator{key: testKey, now: h.clock.Now}
	st, out := h.do("POST", url, body, "X-Player-Id", "1001")
	wantError(t, "header without -player-header", st, out, 401, "unauthenticated")
}

func TestConfigTakesFlagsThenEnvironmentAndRefusesUnsafeSetups(t *testing.T) {
	env := map[string]string{"LOOTD_DEV": "true", "LOOTD_PLAYER_HEADER": "X-Player-Id", "LOOTD_LOCK_TTL": "7s", "LOOTD_LISTEN": ":9000"}
	c, err := parseConfig([]string{"-listen", ":9100"}, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.dev || c.playerHeader != "X-Player-Id" || c.lockTTL != 7*time.Second || c.listen != ":9100" {
		t.Fatalf("config %+v: want dev, the header and ttl from the environment, -listen from the flag", c)
	}
	none := func(string) string { return "" }
	for _, args := range [][]string{
		{"-player-header", "X-Player-Id"},                                  // no store
		{"-dev", "-db", "mysql://u@h/db", "-player-header", "X-Player-Id"}, // two stores
		{"-db", "mysql://u@h/db"},                                          // no way to authenticate players
		{"-dev", "-player-header", "X-Player-Id", "-listen", "127.0.0.1:1", "-internal", "127.0.0.1:1"}, // operations on the player listener
		{"-dev", "-player-header", "X-Player-Id", "-lock-ttl", "0s"},                                    // no lease
		{"-dev", "-player-header", "X-Player-Id", "-log-level", "loud"},                                 // unknown level
		{"-dev", "-player-header", "X-Player-Id", "extra"},                                              // stray argument
	} {
		if _, err := parseConfig(args, none, io.Discard); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, err := parseConfig(nil, func(k string) string { return map[string]string{"LOOTD_DEV": "maybe"}[k] }, io.Discard); !errors.Is(err, errUsage) {
		t.Errorf("LOOTD_DEV=maybe: %v, want a usage error naming it", err)
	}
}

func TestMySQLURLBecomesTheDriversDSN(t *testing.T) {
	for in, want := range map[string]string{
		"mysql://app:s3cr%40t@db.internal/game":       "app:s3cr@t@tcp(db.internal:3306)/game",
		"mysql://app@127.0.0.1:3307/game?timeout=5s":  "app@tcp(127.0.0.1:3307)/game?timeout=5s",
		"app:secret@tcp(db:3306)/game?parseTime=true": "app:secret@tcp(db:3306)/game?parseTime=true",
	} {
		if got, err := mysqlDSN(in); err != nil || got != want {
			t.Errorf("mysqlDSN(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"mysql://app@db/", "redis://db/0", "game.db"} {
		if _, err := mysqlDSN(bad); err == nil {
			t.Errorf("mysqlDSN(%q) accepted", bad)
		}
	}
}

func TestTokenCommandMintsWhatTheServerAccepts(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, append(testKey, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	env := func(k string) string { return map[string]string{"LOOTD_TOKEN_KEY_FILE": keyFile}[k] }
	if code := run([]string{"token", "-player", "1001", "-ttl", "1m"}, env, &out, &errOut); code != 0 {
		t.Fatalf("lootd token: exit %d: %s", code, errOut.String())
	}
	p, err := verifyToken(testKey, strings.TrimSpace(out.String()), time.Now())
	if err != nil || p != 1001 {
		t.Fatalf("minted token verifies as %d, %v", p, err)
	}
	if err := os.WriteFile(keyFile, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"token", "-player", "1001"}, env, &out, &errOut); code != 1 {
		t.Errorf("a 5-byte key: exit %d, want 1", code)
	}
}

// A client that lost the answer to its claim and sends it again must be
// able to tell its repeat from the first: "created" is the store's own
// answer (the row inserted or found), for the same intent and for a
// changed one.
func TestRepeatedClaimSaysItIsNotTheFirst(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("S1", 1, 1001))
	for i, c := range []struct {
		body    string
		created bool
		intent  string
	}{
		{`{"sessionNo":"S1","intentType":"NEED"}`, true, "NEED"},
		{`{"sessionNo":"S1","intentType":"NEED"}`, false, "NEED"},
		{`{"sessionNo":"S1","intentType":"GREED"}`, false, "GREED"},
	} {
		st, out := h.claim("1001", c.body)
		if st != 200 || out["accepted"] != true || out["created"] != c.created || out["intentType"] != c.intent {
			t.Fatalf("claim %d (%s) by 1001 in S1 (go test ./cmd/lootd -run TestRepeatedClaimSaysItIsNotTheFirst): %d %v, want 200 created=%v intentType=%s",
				i+1, c.body, st, out, c.created, c.intent)
		}
	}
}

// A player reads their own claim and grant on the player listener, and
// nothing of a session they are not a member of (404, as for a claim).
func TestPlayerReadsOwnClaimAndGrant(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("S1", 1, 1001, 1002))
	mine := func(player string) (int, map[string]any) {
		return h.do("GET", h.player.URL+"/api/loot/sessions/S1/mine", nil, "X-Player-Id", player)
	}
	const rerun = "go test ./cmd/lootd -run TestPlayerReadsOwnClaimAndGrant"
	if st, out := mine("1001"); st != 200 || out["status"] != "CLAIMING" || out["claim"] != nil || out["grant"] != nil {
		t.Fatalf("before any claim (%s): %d %v, want 200 CLAIMING, claim and grant null", rerun, st, out)
	}
	if st, out := h.claim("1001", `{"sessionNo":"S1","intentType":"NEED"}`); st != 200 {
		t.Fatalf("claim: %d %v", st, out)
	}
	st, out := mine("1001")
	if c, _ := out["claim"].(map[string]any); st != 200 || c["intentType"] != "NEED" || c["playerId"] != 1001.0 {
		t.Fatalf("after the claim (%s): %d %v, want 1001's NEED", rerun, st, out)
	}
	if st, out := mine("1002"); st != 200 || out["claim"] != nil {
		t.Fatalf("1002 read 1001's claim (%s): %d %v, want claim null", rerun, st, out)
	}
	st, out = mine("1003")
	wantError(t, "a non-member's read", st, out, 404, "not_found")

	h.clock.Advance(61 * time.Second) // past the 60 s window of spec
	if st, out := h.do("POST", h.internal.URL+"/api/loot/settle", `{"sessionNo":"S1"}`); st != 200 {
		t.Fatalf("settle: %d %v", st, out)
	}
	st, out = mine("1001")
	if g, _ := out["grant"].(map[string]any); st != 200 || out["status"] != "CLOSED" || g["playerId"] != 1001.0 || g["rank"] != 1.0 {
		t.Fatalf("after the settle (%s): %d %v, want CLOSED with 1001's rank-1 grant", rerun, st, out)
	}
	if st, out := mine("1002"); st != 200 || out["grant"] != nil {
		t.Fatalf("1002 after the settle (%s): %d %v, want grant null (it did not claim)", rerun, st, out)
	}
}

// The listing filters by status and deadline and pages by cursor: every
// matching session exactly once, in (deadline, sessionNo) order, however
// the pages fall, on every store lootd runs on (memory, PostgreSQL,
// MariaDB).
func TestListFiltersAndPagesSessions(t *testing.T) {
	for i, b := range inputBackends {
		t.Run("store="+b.name, func(t *testing.T) {
			h := harnessOn(t, i)
			if _, ok := h.be.store.(loot.Lister); !ok {
				t.Fatalf("lootd's %s store does not implement loot.Lister: GET /api/loot/sessions answers 501 on it", b.name)
			}
			testList(t, h, "go test ./cmd/lootd -run TestListFiltersAndPagesSessions/store="+b.name)
		})
	}
}

// A store written for the Service alone need not list (loot.Lister is
// not part of loot.Store): the listing answers 501 not_implemented on it.
func TestListOnAStoreThatCannotListIs501(t *testing.T) {
	h := newHarness(t, func(be *backend) { be.store = unlisted{be.store} })
	st, out := h.do("GET", h.internal.URL+"/api/loot/sessions", nil)
	wantError(t, "list on a store without List", st, out, 501, "not_implemented")
}

// unlisted hides a store's List.
type unlisted struct{ loot.Store }

func testList(t *testing.T, h *harness, rerun string) {
	// Five sessions with windows of 60+i s, so their deadlines rise with
	// i on any clock that does not run back 1 s between two opens; L1 and
	// L3 claiming, the rest OPEN.
	var deadlines []string
	for i, no := range []string{"L0", "L1", "L2", "L3", "L4"} {
		s := spec(no, 1, 1001)
		s.ClaimWindowSeconds = 60 + i
		st, out := h.do("POST", h.internal.URL+"/api/loot/sessions", s)
		if st != 201 {
			t.Fatalf("open %s: %d %v", no, st, out)
		}
		deadlines = append(deadlines, out["deadline"].(string))
		if i%2 == 1 {
			if st, out := h.do("POST", h.internal.URL+"/api/loot/sessions/"+no+"/start", nil); st != 200 {
				t.Fatalf("start %s: %d %v", no, st, out)
			}
		}
	}
	page := func(query string) ([]string, string) {
		t.Helper()
		st, out := h.do("GET", h.internal.URL+"/api/loot/sessions?"+query, nil)
		if st != 200 {
			t.Fatalf("list ?%s (%s): %d %v", query, rerun, st, out)
		}
		var nos []string
		for _, s := range out["sessions"].([]any) {
			nos = append(nos, s.(map[string]any)["sessionNo"].(string))
		}
		next, _ := out["next"].(string)
		return nos, next
	}
	var all []string
	for q := "limit=2"; ; {
		nos, next := page(q)
		all = append(all, nos...)
		if next == "" {
			break
		}
		q = "limit=2&after=" + next
	}
	if got := strings.Join(all, ","); got != "L0,L1,L2,L3,L4" {
		t.Errorf("pages of 2 (%s): %s, want L0,L1,L2,L3,L4", rerun, got)
	}
	if nos, _ := page("status=CLAIMING"); strings.Join(nos, ",") != "L1,L3" {
		t.Errorf("status=CLAIMING (%s): %v, want L1,L3", rerun, nos)
	}
	q := url.Values{"deadlineFrom": {deadlines[1]}, "deadlineTo": {deadlines[3]}}.Encode()
	if nos, _ := page(q); strings.Join(nos, ",") != "L1,L2" {
		t.Errorf("deadlines in [%s, %s) (%s): %v, want L1,L2", deadlines[1], deadlines[3], rerun, nos)
	}
	for _, bad := range []string{"status=DONE", "limit=0", "limit=101", "deadlineFrom=yesterday", "after=xyz"} {
		st, out := h.do("GET", h.internal.URL+"/api/loot/sessions?"+bad, nil)
		wantError(t, "list ?"+bad, st, out, 400, "bad_argument")
	}
}
