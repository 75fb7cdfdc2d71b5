package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/onceproof/onceproof/internal/redact"
	"github.com/onceproof/onceproof/ref/loot"
)

// config is what the flags (or their LOOTD_* environment variables) say.
//
// The operator's duties:
//
//  1. Expose -listen to players and -internal only to the game's servers.
//  2. Authenticate players: tokens, or -player-header behind a gateway that
//     strips that header from every client request.
//  3. Give the database account SELECT, INSERT and UPDATE, and EXECUTE on
//     MySQL/MariaDB (see ref/loot.Service).
//     Items go to the store's loot_inventory table, which the game reads;
//     sessions rank by rule v1, a player's wins counted in that table.
//     With -inventory, items go to that HTTP service instead (keyed by
//     grant number: see ref/loot/httpinventory) and a player's wins are
//     their SUCCESS grants in loot_grant, which has no index by player:
//     with a long history, add one on (player_id, loot_code).
//  4. Pick -lock-ttl above the slowest settle; stop with SIGTERM (in-flight
//     requests drain); alert on lootd_grants_pending, settle outcomes and
//     lootd_lock_degraded (a lock call failed, or timed out after
//     loot.DefaultLockTimeout(-lock-ttl), 300ms at the default: settles
//     go on through the store's CAS).
type config struct {
	listen, internal string
	db, redis        string
	redisPrefix      string
	inventory        string // -inventory: the HTTP inventory's URL; "" is the store's own
	dev              bool
	dbConns          int
	dbCoalesce       bool
	lockTTL          time.Duration
	settleEvery      time.Duration
	compensateEvery  time.Duration
	playerHeader     string
	tokenKeyFile     string
	drain            time.Duration
	logLevel         string
	maxConns         int           // player listener's cap; 0: derived (capsFor)
	maxInternalConns int           // operations listener's cap; 0: defaultInternalConns
	idleTimeout      time.Duration // players' keep-alive idle
	clockSkew        time.Duration // -clock-skew: added to this process's own clock (clock.go)
}

// errUsage is a bad command line: main exits 2.
var errUsage = errors.New("usage")

// envName is the environment variable that stands for flag name:
// -lock-ttl is LOOTD_LOCK_TTL.
func envName(name string) string {
	return "LOOTD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// flags declares every flag of lootd on fs, writing into c.
func (c *config) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8080", "player-facing `address` (POST /api/loot/intent only)")
	fs.StringVar(&c.internal, "internal", "127.0.0.1:8081", "operations `address`: open, start, settle, cancel, queries, /metrics, /healthz; never expose it to players")
	fs.StringVar(&c.db, "db", "", "the store: postgres://user:pass@host:5432/db, mysql://user:pass@host:3306/db, or a go-sql-driver DSN user:pass@tcp(host:3306)/db")
	fs.StringVar(&c.redis, "redis", "", "the settle lock: redis://host:6379/0 (optional: the store's CAS decides without it)")
	fs.StringVar(&c.redisPrefix, "redis-prefix", "", "`prefix` of the lock's keys (tenants sharing one Redis); the keys are the document's loot:settle:lock:<session>")
	fs.StringVar(&c.inventory, "inventory", "", "deliver grants to this HTTP inventory `URL` (POST, the grant number as Idempotency-Key; see ref/loot/httpinventory) instead of the store's own loot_inventory table")
	fs.BoolVar(&c.dev, "dev", false, "in-memory store, lock and inventory (the inventory -inventory's, if given): no servers, nothing survives the process")
	fs.IntVar(&c.dbConns, "db-conns", 64, "most connections to the database")
	fs.BoolVar(&c.dbCoalesce, "db-coalesce", true, "coalesce concurrent claims and settles into one database call per batch (the SQL stores' Options.Batch); -db-coalesce=false sends each alone")
	fs.DurationVar(&c.lockTTL, "lock-ttl", loot.DefaultSettleLease, "settle lease: the lock's ttl and how long a settler is presumed alive before another instance takes its session over")
	fs.DurationVar(&c.settleEvery, "settle-every", time.Second, "how often to settle sessions whose deadline passed (and take over stalled settles)")
	fs.DurationVar(&c.compensateEvery, "compensate-every", 5*time.Second, "how often to run Recover: deliver PENDING grants whose lease ended (their backoff), settle what is overdue")
	fs.StringVar(&c.playerHeader, "player-header", "", "trust this request `header` (e.g. X-Player-Id) as the player id: ONLY behind a gateway that strips it from clients")
	fs.StringVar(&c.tokenKeyFile, "token-key-file", "", "`file` holding the HMAC-SHA256 key (>= 32 bytes) of players' Bearer tokens (lootd token mints one)")
	fs.DurationVar(&c.drain, "drain", 10*time.Second, "on SIGTERM/SIGINT, how long in-flight requests and settles may take to finish")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error (debug logs every accepted claim)")
	fs.IntVar(&c.maxConns, "max-conns", 0, "most open connections to -listen (0: what RLIMIT_NOFILE leaves after the pools, a reserve and -max-internal-conns); more are answered 503 and closed")
	fs.IntVar(&c.maxInternalConns, "max-internal-conns", 0, fmt.Sprintf("most open connections to -internal, kept apart from the players' share (0: %d)", defaultInternalConns))
	fs.DurationVar(&c.clockSkew, "clock-skew", 0, "add this `offset` to the process's own clock (a skewed node, for tests: see clock.go for what reads it)")
	fs.DurationVar(&c.idleTimeout, "idle-timeout", defaultPlayerIdle, "how long a player's keep-alive connection may wait for its next request (behind a pooling gateway: above the gateway's idle timeout)")
}

// parseConfig reads args, then fills every flag not given from its
// environment variable (getenv), and checks the result.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var (
		c       config
		flagOut strings.Builder
	)
	fs := flag.NewFlagSet("lootd", flag.ContinueOnError)
	fs.SetOutput(&flagOut)
	c.flags(fs)
	err := fs.Parse(args)
	// The flag package quotes a value it refuses, which may be an address
	// given to the wrong flag: what it says goes out without the secrets of
	// any argument.
	io.WriteString(stderr, redact.Scrub(flagOut.String(), args...))
	if err != nil {
		return c, redact.Error(fmt.Errorf("%w: %w", errUsage, err), args...)
	}
	if fs.NArg() > 0 {
		return c, redact.Error(fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0)), args...)
	}
	if err := fromEnv(fs, getenv); err != nil {
		return c, err
	}
	return c, c.check()
}

// fromEnv sets each flag of fs not given on the command line from its
// environment variable, if that is set: the command line wins.
func fromEnv(fs *flag.FlagSet, getenv func(string) string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		v := getenv(envName(f.Name))
		if given[f.Name] || v == "" || err != nil {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			// The value may be an address put in the wrong variable.
			err = redact.Error(fmt.Errorf("%w: %s=%q: %w", errUsage, envName(f.Name), v, e), v)
		}
	})
	return err
}

func (c config) check() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
	}
	switch {
	case c.dev == (c.db != ""):
		return bad("give exactly one of -db and -dev")
	case c.dev && c.redis != "":
		return bad("-dev keeps its lock in memory; -redis is for a shared store")
	case c.listen == c.internal && !strings.HasSuffix(c.listen, ":0"): // :0 is two ports
		return bad("-listen and -internal are both %s: operations must never be reachable on the player-facing listener", c.listen)
	case !c.dev && c.playerHeader == "" && c.tokenKeyFile == "":
		return bad("no way to authenticate players: give -token-key-file, or -player-header behind a gateway that strips it")
	case c.dbConns < 1:
		return bad("-db-conns %d, want >= 1", c.dbConns)
	case c.lockTTL <= 0 || c.settleEvery <= 0 || c.compensateEvery <= 0 || c.drain < 0:
		return bad("-lock-ttl, -settle-every and -compensate-every must be > 0, -drain >= 0")
	case c.maxConns < 0 || c.maxInternalConns < 0:
		return bad("-max-conns %d, -max-internal-conns %d: want >= 1 (or 0: derived from RLIMIT_NOFILE)", c.maxConns, c.maxInternalConns)
	case c.idleTimeout <= 0:
		return bad("-idle-timeout %v, want > 0", c.idleTimeout)
	}
	if _, err := parseLevel(c.logLevel); err != nil {
		return bad("%v", err)
	}
	return nil
}
