package mysql

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/onceproof/onceproof/internal/redact"
)

// DSN turns a mysql://user:pass@host:port/db?params URL (the form the
// commands take, like postgres://) into go-sql-driver's
// user:pass@tcp(host:port)/db?params; the port defaults to 3306. A URL
// without a database, or of another scheme, is refused, in an error that
// does not show the password (url.Parse's quotes the whole URL).
func DSN(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", redact.Error(err, s)
	}
	if u.Scheme != "mysql" {
		return "", fmt.Errorf("scheme %q, want mysql", u.Scheme)
	}
	host := u.Host
	if u.Port() == "" {
		host += ":3306"
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" {
		return "", errors.New("mysql:// URL names no database")
	}
	user := u.User.Username()
	if p, ok := u.User.Password(); ok {
		user += ":" + p
	}
	dsn := fmt.Sprintf("%s@tcp(%s)/%s", user, host, db)
	if u.RawQuery != "" {
		dsn += "?" + u.RawQuery
	}
	return dsn, nil
}
