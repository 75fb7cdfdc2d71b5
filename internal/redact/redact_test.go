package redact_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"
	goredis "github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/internal/redact"
	"github.com/onceproof/onceproof/internal/redact/redacttest"
	lootmysql "github.com/onceproof/onceproof/ref/loot/mysql"
)

func TestAddrMasksEverySecretFormAndKeepsTheHost(t *testing.T) {
	for _, c := range redacttest.Cases {
		got := redact.Addr(c.Addr)
		if p := c.Problem(got); p != "" || !strings.Contains(got, redact.Mask) {
			t.Errorf("%s: Addr(%q) = %q: %s (want the password as %s)", c.Name, c.Addr, got, p, redact.Mask)
		}
	}
}

// parserMessages is what the parsers and drivers both commands call say
// about addr when they refuse it: the messages that quoted the password.
func parserMessages(addr string) []string {
	var msgs []string
	add := func(_ any, err error) {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	add(url.Parse(addr))
	add(pgconn.ParseConfig(addr))
	add(goredis.ParseURL(addr))
	add(gomysql.ParseDSN(addr))
	dsn, err := lootmysql.DSN(addr)
	add(nil, err)
	if err == nil {
		add(gomysql.ParseDSN(dsn))
	}
	return msgs
}

func TestScrubMasksWhatParsersSayAboutEveryForm(t *testing.T) {
	for _, c := range redacttest.Cases {
		for _, msg := range parserMessages(c.Addr) {
			got := redact.Scrub(msg, c.Addr)
			// A parser need not name the host; it must not show the secret.
			if p := c.Problem(got + redacttest.Host); p != "" {
				t.Errorf("%s: Scrub(%q, addr) = %q: %s", c.Name, msg, got, p)
			}
		}
	}
}

func TestScrubMasksTheAddressHoweverAMessageQuotesIt(t *testing.T) {
	for _, c := range redacttest.Cases {
		for _, msg := range []string{
			fmt.Sprintf("open %s: refused", c.Addr),
			fmt.Sprintf("open %q: refused", c.Addr),
			fmt.Sprintf("open `%s`: refused", c.Addr),
			fmt.Sprintf("LOOTD_DB=%q: refused", c.Addr),
		} {
			got := redact.Scrub(msg, c.Addr)
			if p := c.Problem(got); p != "" || !strings.HasSuffix(got, ": refused") {
				t.Errorf("%s: Scrub(%q, addr) = %q: %s (want the message kept, the password masked)", c.Name, msg, got, p)
			}
		}
	}
}

// Without the address, the forms alone are masked.
func TestScrubMasksTheFormsOfAnAddressItWasNotGiven(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:s3cret@db:5432/game":                     "postgres://app:xxxxx@db:5432/game",
		"postgres://app:p@ss@db/game":                            "postgres://app:xxxxx@db/game",
		"postgres://app@db/game?password=s3cret&sslmode=require": "postgres://app@db/game?password=xxxxx&sslmode=require",
		"postgres://db/game?sslpassword=a&PASSWORD=b":            "postgres://db/game?sslpassword=xxxxx&PASSWORD=xxxxx",
		"host=db user=app password=s3cret dbname=game":           "host=db user=app password=xxxxx dbname=game",
		"host=db password='s3 cret' dbname=game":                 "host=db password=xxxxx dbname=game",
		"redis://:s3cret@cache:6379/0":                           "redis://:xxxxx@cache:6379/0",
		"rediss://user:s3cret@cache:6379/0":                      "rediss://user:xxxxx@cache:6379/0",
		"redis://cache:6379/0":                                   "redis://cache:6379/0",
		"dial app:s3cret@tcp(db:3306)/game: refused":             "dial app:xxxxx@tcp(db:3306)/game: refused",
		`open "app:s3@cret@tcp(db:3306)/game"`:                   `open "app:xxxxx@tcp(db:3306)/game"`,
		"user@db:5432 bypass=1 passwords=2":                      "user@db:5432 bypass=1 passwords=2",
		// The commands' own help shows placeholders, kept readable.
		"want postgres://user:pass@host:5432/db or u:pass@tcp(host)/db": "want postgres://user:pass@host:5432/db or u:pass@tcp(host)/db",
		"redis://:@cache:6379/0": "redis://:@cache:6379/0",
	} {
		if got := redact.Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
}

// An address without a secret is printed as it is.
func TestAddrLeavesAnAddressWithoutASecretAlone(t *testing.T) {
	for _, a := range []string{
		"postgres://app@127.0.0.1:5432/game?sslmode=disable",
		"redis://127.0.0.1:6379/0",
		"app@tcp(127.0.0.1:3306)/game",
		"host=db user=app dbname=game",
		"sqlite:/var/tmp/x",
	} {
		if got := redact.Addr(a); got != a {
			t.Errorf("Addr(%q) = %q, want it unchanged (it holds no secret)", a, got)
		}
	}
}

func TestErrorScrubsTheMessageAndKeepsTheChain(t *testing.T) {
	addr := "mysql://app:S3CRETpw@127.0.0.1:1/game"
	err := redact.Error(fmt.Errorf("open %s: %w", addr, fs.ErrNotExist), addr)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("errors.Is(Error(...), fs.ErrNotExist) = false: Error must keep the chain")
	}
	if want := "open mysql://app:xxxxx@127.0.0.1:1/game: file does not exist"; err.Error() != want {
		t.Errorf("Error(...) = %q, want %q", err, want)
	}
	if redact.Error(nil, addr) != nil {
		t.Errorf("Error(nil) != nil")
	}
}

func TestWriterScrubsEachWrite(t *testing.T) {
	addr := "mysql://app:S3CRETpw@127.0.0.1:1/game"
	var b strings.Builder
	msg := fmt.Sprintf("invalid value %q for flag -n\n", addr)
	n, err := redact.Writer(&b, "-n", addr).Write([]byte(msg))
	if want := "invalid value \"mysql://app:xxxxx@127.0.0.1:1/game\" for flag -n\n"; err != nil || n != len(msg) || b.String() != want {
		t.Errorf("Writer wrote %q (n %d, err %v), want %q (n %d)", b.String(), n, err, want, len(msg))
	}
}
