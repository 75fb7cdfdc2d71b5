package postgres_test

import (
	"context"
	"testing"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/ref/loot/postgres"
)

// Open does not quote a password when it refuses an address or cannot
// reach it. pgx masks its own messages (the user info, and password= and
// sslpassword= in the query, even with an encoded key): this pins that,
// since ref/loot/postgres adds no redaction of its own.
func TestOpenErrorsShowNoPassword(t *testing.T) {
	rt.RefusedWithoutSecrets(t, "Open", rt.Of(rt.Postgres, rt.KeyValue), func(ctx context.Context, addr string) error {
		_, err := postgres.Open(ctx, addr, postgres.Options{})
		return err
	})
}
