package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/onceproof/onceproof/internal/redact"
	"github.com/onceproof/onceproof/ref/loot"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

// run is lootd's command line; it returns the exit code: 0 done, 1 failed,
// 2 bad usage.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) > 0 && args[0] == "token":
		// The flag package quotes a refused value: an address pasted
		// here by mistake must not print its password either.
		stderr = redact.Writer(stderr, args...)
		err = tokenCmd(args[1:], getenv, stdout, stderr)
	case len(args) > 0 && (args[0] == "version" || args[0] == "-version" || args[0] == "--version"):
		err = versionCmd(args[1:], stdout)
	default:
		err = serveCmd(args, getenv, stderr)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "lootd:", err)
		return 2
	}
	fmt.Fprintln(stderr, "lootd:", err)
	return 1
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	return l, l.UnmarshalText([]byte(s))
}

// openTimeout bounds connecting to the store and creating its schema.
const openTimeout = 30 * time.Second

// serveCmd runs the server until SIGTERM or SIGINT, then drains.
func serveCmd(args []string, getenv func(string) string, stderr io.Writer) error {
	c, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	level, _ := parseLevel(c.logLevel) // checked by parseConfig
	logHandler := slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	logger := slog.New(logHandler)
	sig, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	if c.dev && c.playerHeader == "" && c.tokenKeyFile == "" {
		path, err := devTokenKey()
		if err != nil {
			return err
		}
		defer os.Remove(path)
		c.tokenKeyFile = path
		logger.Warn(devKeyMsg, "mint", "go run ./cmd/lootd token -token-key-file "+path+" -player 1001")
	}
	auth, err := newAuthenticator(c.playerHeader, c.tokenKeyFile, c.now)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	octx, cancel := context.WithTimeout(sig, openTimeout)
	be, err := openBackend(octx, c)
	cancel()
	if err != nil {
		return err
	}
	defer be.close()
	be.store = withTestHooks(be.store, logger)
	s, err := newServer(be, auth, c.lockTTL, logger)
	if err != nil {
		return err
	}
	nofile, err := openFileLimit()
	if err != nil {
		return err
	}
	redisConns := 0
	if c.redis != "" {
		redisConns = redisPoolConns()
	}
	caps, err := capsFor(nofile, c, redisConns)
	if err != nil {
		return err
	}
	pl, err := net.Listen("tcp", c.listen)
	if err != nil {
		return err
	}
	il, err := net.Listen("tcp", c.internal)
	if err != nil {
		pl.Close()
		return err
	}
	errLog := slog.NewLogLogger(logHandler, slog.LevelWarn)
	servers := []*http.Server{
		newHTTPServer(s.playerHandler(), errLog, func(*http.Request) time.Duration { return claimBudget }, claimBudget, c.idleTimeout),
		newHTTPServer(s.internalHandler(), errLog, internalBudget(c.lockTTL), max(opsBudget, c.lockTTL), internalIdle),
	}
	serveErr := make(chan error, len(servers))
	listeners := []*notifyingListener{
		{Listener: newCapListener(pl, "player", caps.player, logger), closed: make(chan struct{})},
		{Listener: newCapListener(il, "internal", caps.internal, logger), closed: make(chan struct{})},
	}
	for i, l := range listeners {
		go func() { serveErr <- servers[i].Serve(l) }()
	}
	logger.Info("listening", "player", pl.Addr().String(), "internal", il.Addr().String(),
		"store", be.kind, "inventory", redact.Addr(c.inventory), "lock", be.lock != nil, "lease", c.lockTTL.String(), "player_header", c.playerHeader, "tokens", c.tokenKeyFile != "",
		"max_conns", caps.player, "max_internal_conns", caps.internal, "nofile", nofile)

	stopLoops, stopLoopsNow := context.WithCancel(context.Background())
	work, cancelWork := context.WithCancel(context.Background())
	defer cancelWork()
	var loops sync.WaitGroup
	s.startLoops(&loops, stopLoops, work, c.settleEvery, c.compensateEvery, settleWorkers(c.dbConns))

	var failed error
	select {
	case <-sig.Done():
	case failed = <-serveErr:
	}
	stopSignals() // a second signal ends the process at once
	stopLoopsNow()
	drain, cancelDrain := context.WithTimeout(context.Background(), c.drain)
	defer cancelDrain()
	var shut sync.WaitGroup
	for _, hs := range servers {
		shut.Go(func() {
			if err := hs.Shutdown(drain); err != nil {
				logger.Warn("drain time up: closing the remaining connections", "err", err)
				hs.Close()
			}
		})
	}
	// Shutdown closes the listeners first; the line says so only once
	// they are closed, so whoever reads it knows no new connection is
	// accepted from then on.
	for _, l := range listeners {
		<-l.closed
	}
	logger.Info("shutting down", "drain", c.drain.String())
	loopsDone := make(chan struct{})
	go func() { loops.Wait(); close(loopsDone) }()
	select {
	case <-loopsDone:
	case <-drain.Done():
		logger.Warn("drain time up: cutting the background loops short (the next Recover completes their work)")
		cancelWork()
		<-loopsDone
	}
	shut.Wait()
	logger.Info("stopped")
	if failed != nil && !errors.Is(failed, http.ErrServerClosed) {
		return failed
	}
	return nil
}

const devKeyMsg = "-dev: players authenticate with tokens under a key made for this run (or restart with -player-header X-Player-Id)"

// devTokenKey writes a fresh random token key to a temporary file, for a
// -dev run given no way to authenticate players.
func devTokenKey() (string, error) {
	var key [minKeyLen]byte
	if _, err := rand.Read(key[:]); err != nil {
		return "", err
	}
	f, err := os.CreateTemp("", "lootd-dev-key-")
	if err != nil {
		return "", err
	}
	_, err = f.WriteString(hex.EncodeToString(key[:]) + "\n")
	if err := errors.Join(err, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// newHTTPServer serves h with each request under budget(r) (withBudget);
// longest is the most budget returns. The server's own deadlines are
// backstops for what runs before a handler: headers within
// readHeaderTimeout, the answer within longest plus writeReserve.
func newHTTPServer(h http.Handler, errLog *log.Logger, budget func(*http.Request) time.Duration, longest, idle time.Duration) *http.Server {
	return &http.Server{
		Handler:           withBudget(h, budget),
		ErrorLog:          errLog,
		ReadHeaderTimeout: readHeaderTimeout,
		// No ReadTimeout: withBudget sets each request's read deadline
		// (its body within its budget).
		WriteTimeout: longest + writeReserve,
		IdleTimeout:  idle,
	}
}

// tokenCmd is `lootd token -player ID [-ttl D]`: it prints a player token
// signed with the key of -token-key-file (or LOOTD_TOKEN_KEY_FILE), for
// tests and for curl.
func tokenCmd(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("lootd token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	player := fs.Int64("player", 0, "the player `id`")
	ttl := fs.Duration("ttl", time.Hour, "how long the token is valid")
	keyFile := fs.String("token-key-file", "", "`file` holding the key (or LOOTD_TOKEN_KEY_FILE)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: lootd token: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if err := fromEnv(fs, getenv); err != nil {
		return err
	}
	if *player <= 0 || *ttl <= 0 || *keyFile == "" {
		return fmt.Errorf("%w: lootd token -player ID (> 0) [-ttl D] with -token-key-file or LOOTD_TOKEN_KEY_FILE", errUsage)
	}
	key, err := readKey(*keyFile)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, mintToken(key, loot.PlayerID(*player), time.Now().Add(*ttl)))
	return err
}

// notifyingListener is a listener that closes closed when it is closed.
type notifyingListener struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *notifyingListener) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.closed) })
	return err
}
