package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/ref/loot"
)

// backendNames matches what a client message must not hold: a backend's
// or package's name as an error prefix ("mysql: ", "loot/postgres: ",
// "memory: ", "loot: "), which says what the server runs on.
var backendNames = regexp.MustCompile(`(?i)\b(loot/postgres|loot/mysql|mysql|postgres|pgx|mariadb|memory|redis|loot):`)

// sqlHarnesses are the in-process harness on each backend that can run
// here: memory always, MariaDB and PostgreSQL when their servers are
// installed (ONCEPROOF_REQUIRE_SERVICES=1 makes a missing one a failure).
func sqlHarnesses(t *testing.T) map[string]func(t *testing.T) *harness {
	return map[string]func(t *testing.T) *harness{
		"memory": func(t *testing.T) *harness { return newHarness(t, nil) },
		"mysql": func(t *testing.T) *harness {
			dsn := testserver.MariaDB(t)
			return newHarness(t, func(be *backend) {
				*be = *mustBackend(t, func() (*backend, error) { return mysqlBackend(context.Background(), dsn, 4, true) })
			})
		},
		"postgres": func(t *testing.T) *harness {
			url := testserver.Postgres(t)
			return newHarness(t, func(be *backend) {
				*be = *mustBackend(t, func() (*backend, error) { return postgresBackend(context.Background(), url, 4, true) })
			})
		},
	}
}

func mustBackend(t *testing.T, open func() (*backend, error)) *backend {
	t.Helper()
	be, err := open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.close() })
	return be
}

// TestPlayersCannotTellUnknownSessionsFromOthers: on the player listener,
// a claim on a session that does not exist and one on a session the
// player is not a member of used to answer 404 and 403 not_member: a
// player could probe which session numbers exist. Both must get the same
// status, code and message, on every backend, and neither message may name
// the backend.
func TestPlayersCannotTellUnknownSessionsFromOthers(t *testing.T) {
	for name, newH := range sqlHarnesses(t) {
		t.Run(name, func(t *testing.T) {
			h := newH(t)
			h.claiming(spec("S1", 1, 1001, 1002))
			stUnknown, unknown := h.claim("1003", `{"sessionNo":"S404","intentType":"NEED"}`)
			stOther, other := h.claim("1003", `{"sessionNo":"S1","intentType":"NEED"}`)
			if stUnknown != stOther || fmt.Sprint(unknown) != fmt.Sprint(other) {
				t.Errorf("unknown session: %d %v; another team's session: %d %v; want the same answer", stUnknown, unknown, stOther, other)
			}
			wantError(t, "claim on another team's session", stOther, other, 404, "not_found")
			for _, out := range []map[string]any{unknown, other} {
				if msg, _ := out["message"].(string); backendNames.MatchString(msg) {
					t.Errorf("message %q names the backend or a package", msg)
				}
			}
		})
	}
}

// TestClientMessagesNameNoBackend: toAPIError used to put the error's
// first line into the message, which names the store ("mysql: claim:
// ...", "loot/postgres: session ..."). Each definite answer, wrapped as
// each store and the Service wrap it, must give a message without those
// prefixes, and keep the detail of a bad argument.
func TestClientMessagesNameNoBackend(t *testing.T) {
	for _, prefix := range []string{"mysql: claim: ", "loot/postgres: ", "memory: ", ""} {
		for _, m := range lootErrors {
			if m.err == loot.ErrOutcomeUnknown {
				continue
			}
			err := fmt.Errorf("loot: claim S1: %s%w", prefix, fmt.Errorf("session %q is CLOSED: %w", "S1", m.err))
			e := toAPIError(err)
			if e.Code != m.code || e.Message == "" || backendNames.MatchString(e.Message) {
				t.Errorf("toAPIError(%q) = %s %q, want code %s and a message without backend or package names", err, e.Code, e.Message, m.code)
			}
		}
	}
	bad := fmt.Errorf("mysql: open S1: %w", fmt.Errorf("%w: quantity 0, want >= 1", loot.ErrBadArgument))
	if e := toAPIError(bad); e.Code != "bad_argument" || !regexp.MustCompile(`quantity 0, want >= 1$`).MatchString(e.Message) || backendNames.MatchString(e.Message) {
		t.Errorf("toAPIError(%q) = %s %q, want bad_argument ending in the detail, without backend or package names", bad, e.Code, e.Message)
	}
	if e := toAPIError(errors.New("mysql: dial tcp 10.0.0.7:3306: refused")); e.Code != "outcome_unknown" || backendNames.MatchString(e.Message) {
		t.Errorf("toAPIError(a driver error) = %s %q, want outcome_unknown without backend names", e.Code, e.Message)
	}
}
