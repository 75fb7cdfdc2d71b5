package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

// runFails runs lootd's command line, which must fail (every address of
// redacttest points at a port that refuses, or does not parse), and
// returns everything it printed. A run that serves is stopped by nothing:
// it fails the test after twice openTimeout, the longest an open may take.
func runFails(t *testing.T, args []string, env map[string]string) (code int, printed string) {
	t.Helper()
	var out, errOut bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run(args, func(k string) string { return env[k] }, &out, &errOut) }()
	select {
	case code = <-done:
	case <-time.After(2 * openTimeout):
		t.Fatalf("lootd %s (env %v) still running after %v: it opened an address meant to fail", strings.Join(args, " "), env, 2*openTimeout)
	}
	if code == 0 {
		t.Errorf("lootd %s (env %v): exit 0, want a failure", strings.Join(args, " "), env)
	}
	return code, out.String() + errOut.String()
}

// listeners keeps every run off the default ports (never reached: each
// fails in its open).
var listeners = []string{"-listen", "127.0.0.1:0", "-internal", "127.0.0.1:0", "-player-header", "X-Player-Id"}

// Every secret form of redacttest given to -db or LOOTD_DB: what lootd
// prints names the host and never the password.
func TestDBAddressErrorsShowTheHostNotThePassword(t *testing.T) {
	for _, c := range redacttest.Of(redacttest.Postgres, redacttest.KeyValue, redacttest.MySQL, redacttest.DSN) {
		for _, via := range []string{"-db", "LOOTD_DB"} {
			args, env := append([]string{"-db", c.Addr}, listeners...), map[string]string(nil)
			if via == "LOOTD_DB" {
				args, env = listeners, map[string]string{"LOOTD_DB": c.Addr}
			}
			code, printed := runFails(t, args, env)
			if p := c.Problem(printed); p != "" {
				t.Errorf("%s via %s: exit %d, lootd %s:\n%s", c.Name, via, code, p, printed)
			}
		}
	}
}

// Every secret form of redacttest given to -redis or LOOTD_REDIS, with a
// database that opens: the lock's errors name the host, never the password.
func TestRedisAddressErrorsShowTheHostNotThePassword(t *testing.T) {
	db := testserver.Postgres(t)
	for _, c := range redacttest.Of(redacttest.Redis) {
		for _, via := range []string{"-redis", "LOOTD_REDIS"} {
			args, env := append([]string{"-db", db, "-redis", c.Addr}, listeners...), map[string]string(nil)
			if via == "LOOTD_REDIS" {
				args, env = append([]string{"-db", db}, listeners...), map[string]string{"LOOTD_REDIS": c.Addr}
			}
			code, printed := runFails(t, args, env)
			if p := c.Problem(printed); p != "" {
				t.Errorf("%s via %s: exit %d, lootd %s:\n%s", c.Name, via, code, p, printed)
			}
		}
	}
}

// An address put in a variable that does not take one (a slip when
// writing the environment) is quoted in the error without its password.
func TestAMisplacedAddressInTheEnvironmentShowsNoPassword(t *testing.T) {
	for _, c := range redacttest.Cases {
		env := map[string]string{"LOOTD_DB_CONNS": c.Addr, "LOOTD_DEV": "true"}
		code, printed := runFails(t, listeners, env)
		if p := c.Problem(printed); p != "" || code != 2 || !strings.Contains(printed, "LOOTD_DB_CONNS") {
			t.Errorf("%s in LOOTD_DB_CONNS: exit %d, lootd %s:\n%s\nwant exit 2 naming LOOTD_DB_CONNS, no password", c.Name, code, p, printed)
		}
	}
}

// An address given to a flag that does not take one, or as an argument
// (-db forgotten), is quoted in the error without its password.
func TestAMisplacedAddressOnTheCommandLineShowsNoPassword(t *testing.T) {
	for _, c := range redacttest.Cases {
		for _, args := range [][]string{
			append([]string{"-dev", "-db-conns", c.Addr}, listeners...),
			append([]string{"-dev"}, append(listeners, c.Addr)...),
			{"token", "-player", c.Addr},
			{"token", "-player", "1", c.Addr},
		} {
			code, printed := runFails(t, args, nil)
			if p := c.Problem(printed); p != "" || code != 2 {
				t.Errorf("%s: lootd %s: exit %d, %s:\n%s\nwant exit 2, no password", c.Name, strings.Join(args, " "), code, p, printed)
			}
		}
	}
}

// A bad -redis is a usage error found before the database is dialled: a
// lock address that cannot work must not wait for the store's open.
func TestABadRedisAddressFailsBeforeTheDatabaseIsOpened(t *testing.T) {
	for _, c := range []struct{ redis, want string }{
		{"redis://:S3CRET%zz@127.0.0.1:1", "invalid URL escape"},
		{"redis://:S3CRETpw@127.0.0.1:1/notanumber", "invalid database number"},
		{"http://127.0.0.1:1", "invalid URL scheme"},
	} {
		// The database refuses: had lootd dialled it first, it would
		// report that instead (exit 1).
		args := append([]string{"-db", "postgres://app@127.0.0.1:1/game", "-redis", c.redis}, listeners...)
		code, printed := runFails(t, args, nil)
		if code != 2 || !strings.Contains(printed, c.want) || strings.Contains(printed, redacttest.Marker) {
			t.Errorf("-redis %s: exit %d, printed %q; want exit 2, %q, no password", c.redis, code, printed, c.want)
		}
	}
}
