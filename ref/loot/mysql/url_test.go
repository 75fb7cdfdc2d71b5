package mysql_test

import (
	"context"
	"testing"

	rt "github.com/onceproof/onceproof/internal/redact/redacttest"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// Neither DSN nor Open quotes a password when it refuses an address: their
// parsers (url.Parse, go-sql-driver's ParseDSN) quote what they choke on.
func TestDSNAndOpenErrorsShowNoPassword(t *testing.T) {
	rt.RefusedWithoutSecrets(t, "DSN then Open", rt.Of(rt.MySQL), func(ctx context.Context, addr string) error {
		dsn, err := mysql.DSN(addr)
		if err == nil {
			_, err = mysql.Open(ctx, dsn, mysql.Options{})
		}
		return err
	})
	rt.RefusedWithoutSecrets(t, "Open", rt.Of(rt.DSN), func(ctx context.Context, addr string) error {
		_, err := mysql.Open(ctx, addr, mysql.Options{})
		return err
	})
}
