// Package testkit only groups the test kits the module's tests share:
// testserver (throwaway PostgreSQL, MariaDB and Redis servers), nodetest
// (settler nodes in child processes), pgrole (the least-privilege
// application role), benchkit (the benchmarks' parallel loop and
// redis-benchmark) and browser (pages loaded in headless chromium). Nothing outside a _test.go file or another test kit
// imports them; the runtime helpers (internal/coalesce, internal/pgstore,
// internal/redisstore, internal/slots) live beside this directory and
// import no test kit.
package testkit
