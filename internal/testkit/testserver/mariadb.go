package testserver

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// Maria is a running throwaway MariaDB server.
type Maria struct {
	// Port is the TCP port it listens on, on 127.0.0.1.
	Port int
	// Dir holds its data directory, unix socket and log; removed at stop.
	Dir string

	proc  *process
	admin *sql.DB // root, to create databases; safe for concurrent use
}

var mariaShared shared[*Maria]

// MariaDBServer returns the process's shared MariaDB server, starting it on
// first use. It skips tb (or fails it, see RequireEnv) when MariaDB is not
// installed or does not start.
func MariaDBServer(tb testing.TB) *Maria {
	tb.Helper()
	return mariaShared.get(tb, "mariadb", startMaria)
}

// MariaDB returns the DSN (go-sql-driver/mysql form, as root, no
// parameters) of a new, empty database on the shared server, for tb alone.
// Like Postgres, the database is left behind when tb ends.
func MariaDB(tb testing.TB) string {
	tb.Helper()
	return newDatabase(tb, MariaDBServer(tb))
}

// DSN returns the DSN of database db on s, as root over TCP.
func (s *Maria) DSN(db string) string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s", s.Port, db)
}

// CreateDatabase creates database name (lowercase letters, digits and
// underscores) with utf8mb4 as its default character set, and returns its
// DSN.
func (s *Maria) CreateDatabase(name string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb4"); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	return s.DSN(name), nil
}

func startMaria() (*Maria, error) {
	installDB, err := findBinary("mariadb-install-db")
	if err != nil {
		return nil, err
	}
	mariadbd, err := findBinary("mariadbd")
	if err != nil {
		return nil, err
	}
	// mariadbd refuses to run as root unless told --user=root; Debian's
	// mariadb-server package creates the "mysql" user.
	cred, err := unprivileged("mysql", "nobody")
	if err != nil {
		return nil, err
	}
	dir, err := ownedTempDir("onceproof-mariadb-", cred)
	if err != nil {
		return nil, err
	}
	data := filepath.Join(dir, "data")
	// --no-defaults: the machine's /etc/mysql must not configure (or
	// break) the throwaway server. root gets an empty password
	// (authentication method "normal"): the server lives for one test
	// binary, on loopback.
	ini := command(cred, dir, installDB, "--no-defaults", "--datadir="+data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve")
	if out, err := ini.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%s: %v: %s", installDB, err, out)
	}
	return tryPorts(dir, func() (*Maria, error) { return launchMaria(cred, mariadbd, dir, data) })
}

func launchMaria(cred *syscall.Credential, bin, dir, data string) (*Maria, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "mariadb.log")
	cmd := command(cred, dir, bin, "--no-defaults",
		"--datadir="+data, "--tmpdir="+dir,
		"--socket="+filepath.Join(dir, "mysqld.sock"), "--pid-file="+filepath.Join(dir, "mysqld.pid"),
		"--log-error="+logPath,
		"--port="+strconv.Itoa(port), "--bind-address=127.0.0.1", "--skip-networking=0",
		"--skip-name-resolve",
		// Durability of the server itself is not under test (we kill
		// clients, never this server), so skip the disk flushes.
		"--skip-log-bin", "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0",
		// What Debian's own configuration sets; the stores under test
		// declare their tables' character set anyway.
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
		// Benchmarks run 64 clients plus several nodes' pools at once.
		"--max-connections=300",
	)
	p, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "tcp", "127.0.0.1:"+strconv.Itoa(port)
	cfg.Timeout = 2 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		p.stop(syscall.SIGKILL, time.Second)
		return nil, err
	}
	admin := sql.OpenDB(conn)
	s := &Maria{Port: port, Dir: dir, proc: p, admin: admin}
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := admin.PingContext(ctx)
		cancel()
		if err == nil {
			return s, nil
		}
		if p.exited() || time.Now().After(deadline) {
			admin.Close()
			p.stop(syscall.SIGKILL, time.Second)
			return nil, fmt.Errorf("mariadbd on port %d did not start: %v; log: %s", port, err, tail(logPath, 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Maria) stop() {
	s.admin.Close()
	// SIGTERM is mariadbd's normal shutdown: it disconnects clients and
	// exits.
	s.proc.stop(syscall.SIGTERM, 10*time.Second)
	os.RemoveAll(s.Dir)
}
