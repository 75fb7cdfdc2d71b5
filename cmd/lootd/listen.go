package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Connection caps. Every accepted connection is a file descriptor; once
// the process has none left, accept fails on both listeners ("accept4:
// too many open files") and the store's pool cannot dial, so one client
// holding idle connections to the player listener would silence
// operations. Each listener therefore has a cap, and the two caps plus
// everything else the process holds fit under RLIMIT_NOFILE: the player
// listener can fill only its own share.

// fdReserve is the descriptors the process holds besides its
// connections and its store pools: stdin, stdout, stderr (3); the two
// listening sockets (2); the runtime's epoll and its wake-up eventfd (2);
// a token key file being read (1); the metrics' process collector
// reading /proc/self/fd and a stat file (2); one freshly accepted
// connection per listener being refused over its cap (2); a DNS lookup
// while a pool dials a host name (1): 13. 64 leaves room for what a
// dependency opens that this count misses; it does not grow with load.
const fdReserve = 64

// defaultInternalConns is the operations listener's cap: its clients are
// the game's servers (a connection pool each), load balancer probes and a
// scraper. 256 is 30 game servers with a pool of 8 each (240) plus 16
// for probes and scrapes.
const defaultInternalConns = 256

// minPlayerConns: a limit that leaves the players fewer connections than
// this is a misconfiguration to refuse at startup, not a cap to run with.
const minPlayerConns = 64

// redisPoolConns is the Redis lock's pool: go-redis's default PoolSize
// (10 per CPU), which -redis is opened with (redis.Options.PoolSize 0).
func redisPoolConns() int { return 10 * runtime.GOMAXPROCS(0) }

// connCaps are the two listeners' connection caps.
type connCaps struct{ player, internal int }

// capsFor derives the caps from nofile (the process's RLIMIT_NOFILE,
// which the Go runtime raises to the hard limit at start) and c: the
// internal listener gets c.maxInternalConns (or defaultInternalConns),
// the players what is left after fdReserve, the database pool
// (-db-conns), the Redis pool (redisConns, 0 without -redis) and the
// inventory's (inventoryConns, 0 without -inventory), unless c.maxConns
// sets it. A cap the limit cannot hold is a usage error: it
// would bring the starvation back.
func capsFor(nofile uint64, c config, redisConns int) (connCaps, error) {
	pools := redisConns + inventoryConns(c)
	if !c.dev {
		pools += c.dbConns
	}
	caps := connCaps{player: c.maxConns, internal: c.maxInternalConns}
	if caps.internal == 0 {
		caps.internal = defaultInternalConns
	}
	// int64: nofile may be RLIM_INFINITY.
	avail := int64(min(nofile, 1<<40)) - fdReserve - int64(pools) - int64(caps.internal)
	if caps.player == 0 {
		caps.player = int(min(avail, 1<<30))
		if caps.player < minPlayerConns {
			return caps, fmt.Errorf("%w: RLIMIT_NOFILE %d leaves the player listener %d connections after %d reserved, %d for the store's pools and %d for -max-internal-conns: raise the limit (ulimit -n) or lower -db-conns / -max-internal-conns",
				errUsage, nofile, avail, fdReserve, pools, caps.internal)
		}
		return caps, nil
	}
	if int64(caps.player) > avail {
		return caps, fmt.Errorf("%w: -max-conns %d: RLIMIT_NOFILE %d holds at most %d after %d reserved, %d for the store's pools and %d for -max-internal-conns",
			errUsage, caps.player, nofile, max(avail, 0), fdReserve, pools, caps.internal)
	}
	return caps, nil
}

// openFileLimit is the process's RLIMIT_NOFILE (its soft limit: the one
// accept is refused by).
func openFileLimit() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("reading RLIMIT_NOFILE: %w", err)
	}
	return r.Cur, nil
}

// capListener accepts at most cap connections at once. Over the cap it
// accepts the connection, writes a 503 with Retry-After and closes it,
// rather than leaving it unaccepted (netutil.LimitListener's way): an
// unaccepted connection waits in the kernel's backlog, its client hanging
// with no answer until its own timeout, and once the backlog is full new
// clients' SYNs are dropped and retried for minutes. Refused at once, a
// client learns the service is busy and retries after Retry-After, and
// the backlog stays empty, so a freed slot serves the next connection
// without delay. A client whose request was already in flight may see a
// reset instead of the 503 (its unread bytes make the close a reset):
// either way it learns at once.
type capListener struct {
	net.Listener
	name  string // "player" or "internal": for the log
	cap   int
	slots chan struct{} // one token per open connection
	log   *slog.Logger
	now   func() time.Time

	refused atomic.Int64
	// lastWarn is when the cap was last logged; only Accept's goroutine
	// (http.Server's serve loop) touches it.
	lastWarn time.Time
}

// capWarnEvery spaces the cap's WARN lines: a flood of refusals is one
// line a minute (with the count since the last), not one per connection.
const capWarnEvery = time.Minute

// refuseWriteTimeout bounds writing the 503 to a refused connection. The
// answer (< 256 bytes) goes into a fresh socket's empty send buffer, which
// never blocks; the bound keeps a broken socket from stalling the accept
// loop.
const refuseWriteTimeout = 50 * time.Millisecond

func newCapListener(l net.Listener, name string, cap int, log *slog.Logger) *capListener {
	return &capListener{Listener: l, name: name, cap: cap, slots: make(chan struct{}, cap), log: log, now: time.Now}
}

// busyResponse is the whole HTTP answer to a connection over the cap.
var busyResponse = func() []byte {
	body, _ := json.Marshal(apiError{Code: "too_many_connections",
		Message: "the server is at its connection limit; retry after the Retry-After seconds"})
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: %s\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s\n",
		strconv.Itoa(retryAfter), len(body)+1, body)
}()

func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.slots <- struct{}{}:
			return &slotConn{Conn: c, release: func() { <-l.slots }}, nil
		default:
			l.refuse(c)
		}
	}
}

func (l *capListener) refuse(c net.Conn) {
	_ = c.SetWriteDeadline(l.now().Add(refuseWriteTimeout))
	_, _ = c.Write(busyResponse)
	_ = c.Close()
	n := l.refused.Add(1)
	if now := l.now(); now.Sub(l.lastWarn) >= capWarnEvery {
		l.lastWarn = now
		l.log.Warn("connection cap reached: refusing new connections with 503", "listener", l.name, "cap", l.cap, "refused_total", n)
	}
}

// slotConn is an accepted connection holding one of its listener's slots
// until it is closed.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite keeps the TCP half-close that http.Server uses to end a
// connection without a reset (it looks for this method on the conn).
func (c *slotConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
