// Package testkit only groups the test kits the module's tests share:
// testserver (throwaway PostgreSQL, MariaDB and Redis servers) and nodetest (settler
// nodes in child processes). Nothing outside a _test.go file or another
// test kit imports them; the runtime helpers (internal/coalesce,
// internal/refenv) live beside this directory and import no test kit.
package testkit
