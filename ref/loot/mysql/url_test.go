package mysql_test

import (
	"context"
	"testing"
	"time"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// Neither DSN nor Open quotes a password when it refuses an address: their
// parsers (url.Parse, go-sql-driver's ParseDSN) quote what they choke on.
func TestDSNAndOpenErrorsShowNoPassword(t *testing.T) {
	for _, c := range rt.Of(rt.MySQL, rt.DSN) {
		dsn, err := mysql.DSN(c.Addr)
		if err != nil {
			if p := c.Problem(err.Error() + rt.Host); p != "" {
				t.Errorf("%s: DSN(%q) = %q: %s", c.Name, c.Addr, err, p)
			}
			continue
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // port 1 refuses at once
		_, err = mysql.Open(ctx, dsn, mysql.Options{})
		cancel()
		if err == nil {
			t.Errorf("%s: Open(%q) succeeded; want refused", c.Name, dsn)
		} else if p := c.Problem(err.Error() + rt.Host); p != "" {
			t.Errorf("%s: Open(%q) = %q: %s", c.Name, dsn, err, p)
		}
	}
	for _, c := range rt.Of(rt.DSN) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := mysql.Open(ctx, c.Addr, mysql.Options{})
		cancel()
		if err == nil {
			t.Errorf("%s: Open(%q) succeeded; want refused", c.Name, c.Addr)
		} else if p := c.Problem(err.Error() + rt.Host); p != "" {
			t.Errorf("%s: Open(%q) = %q: %s", c.Name, c.Addr, err, p)
		}
	}
}
