package postgres_test

import (
	"context"
	"testing"
	"time"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// Open does not quote a password when it refuses an address or cannot
// reach it: pgx masks a URL's user info but quotes its query, password=
// and all, when another parameter is bad.
func TestOpenErrorsShowNoPassword(t *testing.T) {
	for _, c := range rt.Of(rt.Postgres, rt.KeyValue) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // port 1 refuses at once
		_, err := postgres.Open(ctx, c.Addr, postgres.Options{})
		cancel()
		if err == nil {
			t.Errorf("%s: Open(%q) succeeded; want refused", c.Name, c.Addr)
		} else if p := c.Problem(err.Error() + rt.Host); p != "" {
			t.Errorf("%s: Open(%q) = %q: %s", c.Name, c.Addr, err, p)
		}
	}
}
