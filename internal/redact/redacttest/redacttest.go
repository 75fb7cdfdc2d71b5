// Package redacttest is the one table of secret forms that internal/redact's
// tests and both commands' tests (cmd/lootd's -db, -redis, LOOTD_DB and
// LOOTD_REDIS; cmd/onceproof's -store and -lock) run, so a form that one
// binary masks and the other prints fails the other's tests.
package redacttest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Kind is what an address is, which says the flags that take it.
type Kind string

const (
	Postgres Kind = "postgres" // postgres:// and postgresql:// URLs
	KeyValue Kind = "keyvalue" // libpq's host=... password=... form
	MySQL    Kind = "mysql"    // mysql:// URLs
	DSN      Kind = "dsn"      // go-sql-driver's user:pass@tcp(host)/db
	Redis    Kind = "redis"    // redis:// and rediss:// URLs
)

// Host is every case's host, which what is printed must still name. Port 1
// on loopback refuses a connection at once, so a case that parses fails
// fast wherever it is tried.
const Host = "127.0.0.1"

// Marker is in every case's password: nothing printed may contain it.
const Marker = "S3CRET"

// Case is one address holding a secret.
type Case struct {
	Name string
	Kind Kind
	Addr string
	// Leaks are what must not be printed besides Marker: the pieces of
	// the password a parser quotes when it chokes on them.
	Leaks []string
}

// Cases holds every form: the password plain, percent-encoded, malformed
// (an invalid escape) and raw with each of @ : / ? # % and a space, in the
// user info, in a query parameter and in key=value.
var Cases = []Case{
	{Name: "postgres/plain", Kind: Postgres, Addr: "postgres://app:S3CRETpw@127.0.0.1:1/game"},
	{Name: "postgres/bad-escape", Kind: Postgres, Addr: "postgres://app:S3CRET%zzPW@127.0.0.1:1/game", Leaks: []string{"%zz"}},
	{Name: "postgres/encoded", Kind: Postgres, Addr: "postgres://app:S3CRET%40%3A%2F%3F%23%25%20x@127.0.0.1:1/game"},
	{Name: "postgres/raw-at", Kind: Postgres, Addr: "postgres://app:S3CRET@pw@127.0.0.1:1/game"},
	{Name: "postgres/raw-colon", Kind: Postgres, Addr: "postgres://app:S3CRET:pw@127.0.0.1:1/game"},
	{Name: "postgres/raw-slash", Kind: Postgres, Addr: "postgres://app:S3CRET/pw@127.0.0.1:1/game"},
	{Name: "postgres/raw-question", Kind: Postgres, Addr: "postgresql://app:S3CRET?pw@127.0.0.1:1/game"},
	{Name: "postgres/raw-hash", Kind: Postgres, Addr: "postgres://app:S3CRET#pw@127.0.0.1:1/game"},
	{Name: "postgres/raw-percent", Kind: Postgres, Addr: "postgres://app:S3CRET%pw@127.0.0.1:1/game", Leaks: []string{"%pw"}},
	{Name: "postgres/raw-space", Kind: Postgres, Addr: "postgres://app:S3CRET pw@127.0.0.1:1/game"},
	{Name: "postgres/query", Kind: Postgres, Addr: "postgresql://app@127.0.0.1:1/game?password=S3CRETq&sslmode=disable"},
	{Name: "postgres/query-ssl", Kind: Postgres, Addr: "postgres://app@127.0.0.1:1/game?sslpassword=S3CRETa&PASSWORD=S3CRETb"},
	{Name: "postgres/query-bad-escape", Kind: Postgres, Addr: "postgres://app@127.0.0.1:1/game?password=S3CRET%zz"},
	{Name: "postgres/query-encoded-key", Kind: Postgres, Addr: "postgres://app@127.0.0.1:1/game?pass%77ord=S3CRETq&sslmode=bogus"},
	{Name: "postgres/query-bad-option", Kind: Postgres, Addr: "postgres://app@127.0.0.1:1/game?password=S3CRETq&sslmode=bogus"},
	{Name: "keyvalue/plain", Kind: KeyValue, Addr: "host=127.0.0.1 port=1 user=app password=S3CRETkv sslpassword=S3CRETssl dbname=game"},
	{Name: "keyvalue/quoted", Kind: KeyValue, Addr: "host=127.0.0.1 port=1 user=app password='S3CRET a\\'b' dbname=game"},
	{Name: "mysql/plain", Kind: MySQL, Addr: "mysql://app:S3CRETpw@127.0.0.1:1/game"},
	{Name: "mysql/bad-escape", Kind: MySQL, Addr: "mysql://app:S3CRET%zzPW@127.0.0.1:1/game", Leaks: []string{"%zz"}},
	{Name: "mysql/encoded", Kind: MySQL, Addr: "mysql://app:S3CRET%40%3A%2F%3F%23%25%20x@127.0.0.1:1/game"},
	{Name: "mysql/raw-slash", Kind: MySQL, Addr: "mysql://app:S3CRET/pw@127.0.0.1:1/game"},
	{Name: "mysql/raw-hash", Kind: MySQL, Addr: "mysql://app:S3CRET#pw@127.0.0.1:1/game"},
	{Name: "mysql/raw-space", Kind: MySQL, Addr: "mysql://app:S3CRET pw@127.0.0.1:1/game"},
	{Name: "mysql/no-database", Kind: MySQL, Addr: "mysql://app:S3CRETpw@127.0.0.1:1/"},
	{Name: "dsn/plain", Kind: DSN, Addr: "app:S3CRETpw@tcp(127.0.0.1:1)/game"},
	{Name: "dsn/raw-specials", Kind: DSN, Addr: "app:S3CRET@/:?#% pw@tcp(127.0.0.1:1)/game"},
	{Name: "dsn/unterminated", Kind: DSN, Addr: "app:S3CRETpw@tcp(127.0.0.1:1"},
	{Name: "dsn/slash-no-database", Kind: DSN, Addr: "app:pw/S3CRET%zz@tcp(127.0.0.1:1)"},
	{Name: "dsn/bad-param", Kind: DSN, Addr: "app:S3CRETpw@tcp(127.0.0.1:1)/game?parseTime=maybe"},
	{Name: "redis/plain", Kind: Redis, Addr: "redis://:S3CRETpw@127.0.0.1:1/0"},
	{Name: "redis/bad-escape", Kind: Redis, Addr: "redis://:S3CRET%zz@127.0.0.1:1", Leaks: []string{"%zz"}},
	{Name: "redis/user", Kind: Redis, Addr: "rediss://user:S3CRETpw@127.0.0.1:1/0"},
	{Name: "redis/encoded", Kind: Redis, Addr: "redis://default:S3CRET%40%3A%2F%3F%23%25%20x@127.0.0.1:1/0"},
	{Name: "redis/raw-slash", Kind: Redis, Addr: "redis://default:S3CRET/pw@127.0.0.1:1/0"},
	{Name: "redis/bad-database", Kind: Redis, Addr: "redis://:S3CRETpw@127.0.0.1:1/notanumber"},
}

// Of is the cases of the kinds given.
func Of(kinds ...Kind) []Case {
	var out []Case
	for _, c := range Cases {
		for _, k := range kinds {
			if c.Kind == k {
				out = append(out, c)
			}
		}
	}
	return out
}

// Problem says what is wrong with out, everything printed about c's
// address: a secret shown, or Host not named (the message must still say
// which server). "" when nothing is.
func (c Case) Problem(out string) string {
	for _, s := range append([]string{Marker}, c.Leaks...) {
		if strings.Contains(out, s) {
			return fmt.Sprintf("printed the secret %q", s)
		}
	}
	if !strings.Contains(out, Host) {
		return fmt.Sprintf("does not name the host %s", Host)
	}
	return ""
}

// openBound bounds one open in RefusedWithoutSecrets: every case refuses at
// once (port 1 on loopback) or does not parse, so 10 s is a hung open, not
// a slow one.
const openBound = 10 * time.Second

// RefusedWithoutSecrets calls open (a store's or lock's Open, named what)
// on each case's address and fails t unless it fails, and its error shows
// none of the case's secrets. A library's message need not name the host
// (the caller that prints it says which flag or address it was).
func RefusedWithoutSecrets(t testing.TB, what string, cases []Case, open func(ctx context.Context, addr string) error) {
	t.Helper()
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), openBound)
		err := open(ctx, c.Addr)
		cancel()
		if err == nil {
			t.Errorf("%s: %s(%q) succeeded; want it refused", c.Name, what, c.Addr)
		} else if p := c.Problem(err.Error() + Host); p != "" {
			t.Errorf("%s: %s(%q) = %q: %s", c.Name, what, c.Addr, err, p)
		}
	}
}
