package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/onceproof/onceproof/ref/loot/memory"
)

// endpoint is a route the fuzz target sends to; {id} in path is replaced
// by the fuzzed path id, escaped.
type endpoint struct {
	player       bool
	method, path string
}

// fuzzEndpoints are the routes that take input: bodies and path ids.
var fuzzEndpoints = []endpoint{
	{false, "POST", "/api/loot/sessions"},
	{true, "POST", "/api/loot/intent"},
	{false, "POST", "/api/loot/sessions/{id}/start"},
	{false, "GET", "/api/loot/sessions/{id}"},
	{false, "GET", "/api/loot/sessions/{id}/audit"},
	{false, "POST", "/api/loot/settle"},
	{false, "POST", "/api/loot/cancel"},
}

// seedOf is c as the fuzz target's arguments.
func seedOf(t testing.TB, c inputCase) (uint8, string, string) {
	for i, e := range fuzzEndpoints {
		if e.player != c.player || e.method != c.method {
			continue
		}
		if e.path == c.path {
			return uint8(i), "", c.body
		}
		prefix, suffix, _ := strings.Cut(e.path, "{id}")
		if escaped, ok := strings.CutPrefix(c.path, prefix); ok {
			if escaped, ok = strings.CutSuffix(escaped, suffix); ok && !strings.Contains(escaped, "/") {
				id, err := url.PathUnescape(escaped)
				if err != nil {
					t.Fatalf("seed %s: %v", c.name, err)
				}
				return uint8(i), id, c.body
			}
		}
	}
	t.Fatalf("seed %s: %s %s is no fuzzed endpoint", c.name, c.method, c.path)
	return 0, "", ""
}

// FuzzInput sends a fuzzed body or path id to one of fuzzEndpoints of a
// lootd on the memory backend, whose session S1 is CLAIMING with members
// 1001 and 1002. Every answer must be a success or a 4xx with a JSON error
// (the router's redirects of unclean paths aside), never a 5xx: nothing a
// client sends may be answered "outcome unknown, repeat it". And whatever
// an open accepts must fit every SQL store (storable), so PostgreSQL and
// MariaDB cannot refuse what memory took: TestBadInputIs400OnEveryBackend
// replays the seeds on them. The seeds are badInputs and sameInputs. CI:
//
//	go test -run='^$' -fuzz=FuzzInput -fuzztime=30s ./cmd/lootd/
func FuzzInput(f *testing.F) {
	for _, c := range append(badInputs, sameInputs...) {
		which, id, body := seedOf(f, c)
		f.Add(which, id, body)
	}
	clock := memory.NewClock(t0)
	auth := &authenticator{header: "X-Player-Id", key: testKey, now: clock.Now}
	srv, err := newServer(memoryBackendAt(clock.Now), auth, 10*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	player, internal := srv.playerHandler(), srv.internalHandler()
	serve := func(e endpoint, id, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(e.method, strings.Replace(e.path, "{id}", url.PathEscape(id), 1), strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		h := internal
		if e.player {
			h = player
			r.Header.Set("X-Player-Id", "1001")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, setup := range []struct {
		e    endpoint
		id   string
		body string
		want int
	}{
		{fuzzEndpoints[0], "", `{"sessionNo":"S1","dungeonCode":"D","lootCode":"L","quantity":1,"members":[1001,1002],"claimWindowSeconds":60}`, http.StatusCreated},
		{fuzzEndpoints[2], "S1", "", http.StatusOK},
	} {
		if w := serve(setup.e, setup.id, setup.body); w.Code != setup.want {
			f.Fatalf("setup %s %s: %d %s", setup.e.method, setup.e.path, w.Code, w.Body)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, id, body string) {
		e := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		w := serve(e, id, body)
		what := e.method + " " + e.path
		switch {
		case w.Code >= 500:
			t.Fatalf("%s (id %q, body %q): %d %s, want a success or a 4xx: the client is told to repeat what will never work", what, id, body, w.Code, w.Body)
		case w.Code == http.StatusMovedPermanently || w.Code == http.StatusTemporaryRedirect:
			return // ServeMux cleaning the path (an id of "", "." or ".."): no handler ran
		case w.Code >= 400:
			var e apiError
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code == "" || e.Message == "" {
				t.Fatalf("%s (id %q, body %q): %d %q, want a JSON error with a code and a message", what, id, body, w.Code, w.Body)
			}
			return
		case w.Code != http.StatusOK && (w.Code != http.StatusCreated || e.path != fuzzEndpoints[0].path):
			t.Fatalf("%s (id %q, body %q): %d %s, want 200 (201 for an open) or a 4xx", what, id, body, w.Code, w.Body)
		}
		if e.path != fuzzEndpoints[0].path {
			return
		}
		var s sessionJSON
		if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil {
			t.Fatalf("open (body %q): %d %q: %v", body, w.Code, w.Body, err)
		}
		if why := unstorable(s); why != "" {
			t.Fatalf("open (body %q) accepted %+v, which %s", body, s, why)
		}
		var req openRequest
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			t.Fatalf("open (body %q): 200 for a body that does not decode: %v", body, err)
		}
		// The window asked for is 1 s to a day (maxClaimWindow), compared in
		// seconds: a Duration would wrap. A repeated open answers with the
		// recorded session, so the recorded window is only within the same
		// range, not necessarily the one this body asked for.
		if got := s.Deadline.Sub(s.OpenedAt); req.ClaimWindowSeconds < 1 || req.ClaimWindowSeconds > 86400 ||
			got < time.Second || got > 24*time.Hour {
			t.Fatalf("open (body %q) accepted claimWindowSeconds %d, recording a window of %v; want both 1s..24h", body, req.ClaimWindowSeconds, got)
		}
	})
}

// unstorable says why some SQL store could not hold s, or "". It is
// written from the schemas, not from loot's checks, so that it catches
// those letting something through: PostgreSQL's text refuses NUL and
// invalid UTF-8 (22021) and its checks allow 1..64 bytes, its integer and
// MariaDB's INT end at 2^31-1, MariaDB's DATETIME(6) at year 9999.
func unstorable(s sessionJSON) string {
	for _, code := range []string{s.SessionNo, s.DungeonCode, s.LootCode} {
		switch {
		case !utf8.ValidString(code) || strings.ContainsRune(code, 0):
			return "holds a code PostgreSQL's text refuses"
		case len(code) < 1 || len(code) > 64:
			return "holds a code out of the columns' 1..64 bytes"
		}
	}
	switch {
	case s.Quantity < 1 || s.Quantity > 1<<31-1:
		return "holds a quantity out of a 32-bit INT"
	case s.Deadline.UTC().Year() > 9999:
		return "holds a deadline past MariaDB's DATETIME(6)"
	}
	return ""
}
