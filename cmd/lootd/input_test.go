package main

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
)

// Bad input is answered alike by every backend: a 4xx the client can act
// on, never the 503 outcome_unknown that tells it to repeat the request
// (a client following that contract would retry a NUL forever).

// inputCase is one request to a fresh lootd whose session S1 is CLAIMING
// with members 1001 and 1002.
type inputCase struct {
	name string
	// player sends it to the player listener as player 1001, else to the
	// internal one.
	player             bool
	method, path, body string
	// status and code are what every backend must answer.
	status int
	code   string
}

// openWith is an open of session no (valid as is) with one field
// replaced by raw JSON.
func openWith(no, field, raw string) string {
	fields := []struct{ k, v string }{
		{"sessionNo", `"` + no + `"`}, {"dungeonCode", `"ABYSS-3"`}, {"lootCode", `"SWORD_001"`},
		{"quantity", `1`}, {"members", `[1001]`}, {"claimWindowSeconds", `60`},
	}
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fields {
		if i > 0 {
			b.WriteString(",")
		}
		v := f.v
		if f.k == field {
			v = raw
		}
		fmt.Fprintf(&b, "%q:%s", f.k, v)
	}
	b.WriteString("}")
	return b.String()
}

// overflowWindow is claimWindowSeconds that time.Duration(x)*time.Second
// wraps to 1s: (2^55+1) * 10^9 mod 2^64 = 10^9, since 2^55 * 10^9 =
// 2^64 * 1953125 (10^9 = 2^9 * 1953125).
const overflowWindow = 1<<55 + 1

// badInputs are the requests finding 5 and 6 found answered 503 (or 200)
// instead of 400; each must be a 400 bad_argument on every backend.
var badInputs = []inputCase{
	{name: "open: quantity 2^31 (over PostgreSQL integer and MariaDB INT)", method: "POST", path: "/api/loot/sessions", body: openWith("O2", "quantity", "2147483648")},
	{name: "open: quantity max int64", method: "POST", path: "/api/loot/sessions", body: openWith("O3", "quantity", "9223372036854775807")},
	{name: "open: NUL in sessionNo", method: "POST", path: "/api/loot/sessions", body: openWith("O4", "sessionNo", `"S\u0000"`)},
	{name: "open: NUL in dungeonCode", method: "POST", path: "/api/loot/sessions", body: openWith("O5", "dungeonCode", `"A\u0000"`)},
	{name: "open: NUL in lootCode", method: "POST", path: "/api/loot/sessions", body: openWith("O6", "lootCode", `"\u0000"`)},
	{name: "open: C0 control in sessionNo", method: "POST", path: "/api/loot/sessions", body: openWith("O7", "sessionNo", `"S\n2"`)},
	{name: "open: DEL in lootCode", method: "POST", path: "/api/loot/sessions", body: openWith("O8", "lootCode", `"L\u007f"`)},
	{name: "open: C1 control in dungeonCode", method: "POST", path: "/api/loot/sessions", body: openWith("O9", "dungeonCode", `"D\u0085"`)},
	{name: "open: claimWindowSeconds 2^55+1 (wraps to 1s)", method: "POST", path: "/api/loot/sessions", body: openWith("O10", "claimWindowSeconds", fmt.Sprint(overflowWindow))},
	{name: "open: claimWindowSeconds max int64", method: "POST", path: "/api/loot/sessions", body: openWith("O11", "claimWindowSeconds", fmt.Sprint(math.MaxInt64))},
	{name: "open: claimWindowSeconds min int64", method: "POST", path: "/api/loot/sessions", body: openWith("O12", "claimWindowSeconds", fmt.Sprint(math.MinInt64))},
	{name: "intent: NUL in sessionNo", player: true, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S1\u0000","intentType":"NEED"}`},
	{name: "intent: sessionNo over MaxCodeLen", player: true, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"` + strings.Repeat("S", loot.MaxCodeLen+1) + `","intentType":"NEED"}`},
	{name: "start: NUL in path id", method: "POST", path: "/api/loot/sessions/S1%00/start"},
	{name: "start: invalid UTF-8 path id", method: "POST", path: "/api/loot/sessions/S%FF/start"},
	{name: "session: NUL in path id", method: "GET", path: "/api/loot/sessions/S1%00"},
	{name: "session: invalid UTF-8 path id", method: "GET", path: "/api/loot/sessions/%C3%28"},
	{name: "session: path id over MaxCodeLen", method: "GET", path: "/api/loot/sessions/" + strings.Repeat("S", loot.MaxCodeLen+1)},
	{name: "audit: NUL in path id", method: "GET", path: "/api/loot/sessions/%00/audit"},
	{name: "audit: invalid UTF-8 path id", method: "GET", path: "/api/loot/sessions/%FF/audit"},
	{name: "settle: NUL in sessionNo", method: "POST", path: "/api/loot/settle", body: `{"sessionNo":"S1\u0000"}`},
	{name: "cancel: NUL in sessionNo", method: "POST", path: "/api/loot/cancel", body: `{"sessionNo":"\u0000"}`},
}

func init() {
	for i := range badInputs {
		badInputs[i].status, badInputs[i].code = http.StatusBadRequest, "bad_argument"
	}
}

// sameInputs are requests every backend must answer alike, whatever the
// answer (status 0): the fuzz target's other seeds, valid ones included.
var sameInputs = []inputCase{
	{name: "open: valid", method: "POST", path: "/api/loot/sessions", body: openWith("O13", "", "")},
	{name: "open: quantity max int32", method: "POST", path: "/api/loot/sessions", body: `{"sessionNo":"S3","dungeonCode":"D","lootCode":"L","quantity":2147483647,"members":[1001],"claimWindowSeconds":60}`},
	{name: "open: 64-byte multi-byte sessionNo", method: "POST", path: "/api/loot/sessions", body: openWith("O14", "sessionNo", `"`+strings.Repeat("é", loot.MaxCodeLen/2)+`"`)},
	{name: "open: invalid UTF-8 in the JSON (decoded as U+FFFD)", method: "POST", path: "/api/loot/sessions", body: openWith("O15", "sessionNo", "\"S\xff\"")},
	{name: "open: window a day", method: "POST", path: "/api/loot/sessions", body: `{"sessionNo":"S4","dungeonCode":"D","lootCode":"L","quantity":1,"members":[1001],"claimWindowSeconds":86400}`},
	{name: "open: member max int64", method: "POST", path: "/api/loot/sessions", body: `{"sessionNo":"S5","dungeonCode":"D","lootCode":"L","quantity":1,"members":[9223372036854775807],"claimWindowSeconds":60}`},
	{name: "open: member over int64", method: "POST", path: "/api/loot/sessions", body: openWith("O16", "members", `[9223372036854775808]`)},
	{name: "open: quantity over int64", method: "POST", path: "/api/loot/sessions", body: openWith("O17", "quantity", `1e30`)},
	{name: "intent: valid", player: true, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S1","intentType":"GREED"}`},
	{name: "intent: unknown session", player: true, method: "POST", path: "/api/loot/intent", body: `{"sessionNo":"S404","intentType":"NEED"}`},
	{name: "session: valid", method: "GET", path: "/api/loot/sessions/S1"},
	{name: "session: unknown", method: "GET", path: "/api/loot/sessions/S%20404"},
	{name: "start: repeat", method: "POST", path: "/api/loot/sessions/S1/start"},
	{name: "audit: not due", method: "GET", path: "/api/loot/sessions/S1/audit"},
	{name: "settle: not due", method: "POST", path: "/api/loot/settle", body: `{"sessionNo":"S1"}`},
}

// inputBackends are memory and, on throwaway servers, PostgreSQL and
// MariaDB, each a fresh database.
var inputBackends = []struct {
	name string
	open func(t *testing.T) *backend
}{
	{"memory", nil},
	{"postgres", func(t *testing.T) *backend {
		be, err := postgresBackend(t.Context(), testserver.Postgres(t), 4, true)
		if err != nil {
			t.Fatal(err)
		}
		return be
	}},
	{"mariadb", func(t *testing.T) *backend {
		be, err := mysqlBackend(t.Context(), testserver.MariaDB(t), 4, true)
		if err != nil {
			t.Fatal(err)
		}
		return be
	}},
}

// harnessOn is newHarness on the named backend of inputBackends.
func harnessOn(t *testing.T, i int) *harness {
	t.Helper()
	open := inputBackends[i].open
	if open == nil {
		return newHarness(t, nil)
	}
	be := open(t)
	t.Cleanup(func() { be.close() })
	return newHarness(t, func(mem *backend) { *mem = *be })
}

// answer sends c and returns the status and the error code (empty for a
// success).
func (h *harness) answer(c inputCase) (int, string, map[string]any) {
	h.t.Helper()
	base, header := h.internal.URL, []string(nil)
	if c.player {
		base, header = h.player.URL, []string{"X-Player-Id", "1001"}
	}
	var body any
	if c.body != "" {
		body = c.body
	}
	st, out := h.do(c.method, base+c.path, body, header...)
	code, _ := out["code"].(string)
	return st, code, out
}

// TestBadInputIs400OnEveryBackend replays badInputs and sameInputs on
// memory, PostgreSQL and MariaDB: each bad input must be 400 bad_argument
// everywhere, and every other input answered with the same status and
// code as memory answers it.
func TestBadInputIs400OnEveryBackend(t *testing.T) {
	type got struct {
		status int
		code   string
	}
	answers := make([]map[string]got, len(inputBackends))
	for i, b := range inputBackends {
		t.Run("backend="+b.name, func(t *testing.T) {
			h := harnessOn(t, i)
			h.claiming(spec("S1", 1, 1001, 1002))
			answers[i] = map[string]got{}
			for _, c := range append(badInputs, sameInputs...) {
				st, code, out := h.answer(c)
				answers[i][c.name] = got{st, code}
				if st >= 500 {
					t.Errorf("%s on %s: %d %v, want a 4xx or success: the client cannot fix what it is told to repeat", c.name, b.name, st, out)
				} else if c.status != 0 && (st != c.status || code != c.code) {
					t.Errorf("%s on %s: %d %v, want %d %s", c.name, b.name, st, out, c.status, c.code)
				}
			}
		})
	}
	if answers[0] == nil {
		return
	}
	for i := 1; i < len(inputBackends); i++ {
		if answers[i] == nil {
			continue // skipped or failed to start: reported above
		}
		for _, c := range sameInputs {
			if m, o := answers[0][c.name], answers[i][c.name]; m != o {
				t.Errorf("%s: memory answers %d %s, %s answers %d %s", c.name, m.status, m.code, inputBackends[i].name, o.status, o.code)
			}
		}
	}
}

// TestServiceRefusesUnstorableSpecsOnEveryBackend opens, through the
// Service, specs that no HTTP body can carry but a library caller can:
// invalid UTF-8, and a deadline past the end of MariaDB's DATETIME(6)
// (9999-12-31). Each is ErrBadArgument (400) on every backend.
func TestServiceRefusesUnstorableSpecsOnEveryBackend(t *testing.T) {
	for i, b := range inputBackends {
		t.Run("backend="+b.name, func(t *testing.T) {
			h := harnessOn(t, i)
			now, err := h.be.now(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			valid := loot.Spec{No: "U1", Dungeon: "ABYSS-3", Loot: "SWORD_001", Quantity: 1,
				Deadline: now.Add(time.Minute), Rule: loot.RuleCount, Members: []loot.PlayerID{1001}}
			for k, c := range []struct {
				name string
				edit func(*loot.Spec)
			}{
				{"invalid UTF-8 dungeonCode", func(s *loot.Spec) { s.Dungeon = "ABYSS\xff" }},
				{"invalid UTF-8 sessionNo", func(s *loot.Spec) { s.No = "U\xc3\x28" }},
				{"invalid UTF-8 lootCode", func(s *loot.Spec) { s.Loot = "\xed\xa0\x80" }}, // a UTF-16 surrogate
				{"quantity 2^31", func(s *loot.Spec) { s.Quantity = 1 << 31 }},
				{"deadline in year 10000", func(s *loot.Spec) { s.Deadline = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }},
				{"deadline after 9999-12-31", func(s *loot.Spec) {
					s.Deadline = time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC).Add(time.Microsecond)
				}},
			} {
				spec := valid
				spec.No = fmt.Sprintf("U%d", k) // each its own: an accepted one must not make the next a conflict
				c.edit(&spec)
				_, err := h.srv.svc.Open(t.Context(), spec)
				if !errors.Is(err, loot.ErrBadArgument) || toAPIError(err).status != http.StatusBadRequest {
					t.Errorf("Open with %s on %s: err %v, want ErrBadArgument (400 bad_argument)", c.name, b.name, err)
				}
			}
			if _, err := h.srv.svc.Open(t.Context(), valid); err != nil {
				t.Fatalf("the valid spec on %s: %v", b.name, err)
			}
		})
	}
}
