package testserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// PG is a running throwaway PostgreSQL server.
type PG struct {
	// Port is the TCP port it listens on, on 127.0.0.1.
	Port int
	// Dir holds its data directory and unix socket; removed at stop.
	Dir string

	proc *process

	mu    sync.Mutex
	admin *pgx.Conn // to create databases; guarded by mu
}

var pgShared shared[*PG]

// PostgresServer returns the process's shared PostgreSQL server, starting it
// on first use. It skips tb (or fails it, see RequireEnv) when PostgreSQL is
// not installed or does not start.
func PostgresServer(tb testing.TB) *PG {
	tb.Helper()
	return pgShared.get(tb, "postgresql", startPostgres)
}

// Postgres returns the URL of a new, empty database on the shared server, for
// tb alone. The database is left behind when tb ends (the whole server is
// thrown away when the test binary exits), so a failing test's data can be
// inspected from a TestMain hook if needed.
func Postgres(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, PostgresServer(tb))
}

// URL returns the connection URL of database db on s.
func (s *PG) URL(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, db)
}

// CreateDatabase creates database name (an identifier of lowercase letters,
// digits and underscores) and returns its URL.
func (s *PG) CreateDatabase(name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.URL(name), nil
}

func startPostgres() (*PG, error) {
	initdb, err := findBinary("initdb")
	if err != nil {
		return nil, err
	}
	postgres, err := findBinary("postgres")
	if err != nil {
		return nil, err
	}
	cred, err := unprivileged("postgres", "nobody")
	if err != nil {
		return nil, err
	}
	dir, err := ownedTempDir("onceproof-pg-", cred)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	// -N (no fsync) and trust auth: the cluster lives for one test binary,
	// on loopback, and nobody else can reach it.
	ini := command(cred, dir, initdb, "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N")
	if out, err := ini.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %v: %s", initdb, err, out)
	}
	return tryPorts(dir, func() (*PG, error) { return launchPostgres(cred, postgres, dir, data) })
}

func launchPostgres(cred *syscall.Credential, bin, dir, data string) (*PG, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "postgres.log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := command(cred, dir, bin,
		"-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		// Durability of the server itself is not under test (we kill
		// clients, never this server), so skip the disk flushes.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		// Benchmarks run 64 single-statement clients plus pools of
		// several settler nodes at once; 100 (the default) is too few.
		"-c", "max_connections=300",
	)
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	s := &PG{Port: port, Dir: dir, proc: p}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			s.admin = conn
			return s, nil
		}
		if p.exited() || time.Now().After(deadline) {
			p.stop(syscall.SIGQUIT, 5*time.Second)
			return nil, fmt.Errorf("postgres on port %d did not start: %v; log: %s", port, err, tail(logPath, 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *PG) stop() {
	s.mu.Lock()
	if s.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = s.admin.Close(ctx)
		cancel()
		s.admin = nil
	}
	s.mu.Unlock()
	// SIGINT is PostgreSQL's fast shutdown: it disconnects clients and
	// exits without waiting for them.
	s.proc.stop(syscall.SIGINT, 10*time.Second)
	os.RemoveAll(s.Dir)
}
