package testserver

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a running throwaway Redis server.
type RedisServer struct {
	// Addr is its host:port on 127.0.0.1.
	Addr string
	// Port is the port of Addr.
	Port int
	// Dir is its working directory (the AOF file lives there); removed at stop.
	Dir string

	proc *process
}

var redisShared shared[*RedisServer]

// Redis returns the process's shared Redis server, starting it on first use.
// It runs with appendonly yes and appendfsync always, the persistence
// ref/redis.Open requires of a server it is not told to trust less, so
// tests open it as a user would open theirs. Tests share it and keep apart by key prefix (RedisPrefix).
// It skips tb (or fails it, see RequireEnv) when redis-server is missing.
func Redis(tb testing.TB) *RedisServer {
	tb.Helper()
	return redisShared.get(tb, "redis", func() (*RedisServer, error) {
		return startRedis("--appendonly", "yes", "--appendfsync", "always")
	})
}

// RedisPrefix returns a key prefix for tb alone ("t<N>_<name>:").
func RedisPrefix(tb testing.TB) string { return uniqueName(tb) + ":" }

// StartRedis starts a Redis server for tb alone, with extra redis-server
// arguments (for example "--appendonly", "yes", "--appendfsync", "always" for
// a test that restarts it and expects its data back), and stops it when tb
// ends.
func StartRedis(tb testing.TB, args ...string) *RedisServer {
	tb.Helper()
	s, err := startRedis(args...)
	if err != nil {
		unavailable(tb, "redis", err)
	}
	tb.Cleanup(s.stop)
	return s
}

// URL returns the server's redis:// URL.
func (s *RedisServer) URL() string { return "redis://" + s.Addr }

func startRedis(args ...string) (*RedisServer, error) {
	bin, err := findBinary("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "onceproof-redis-")
	if err != nil {
		return nil, err
	}
	return tryPorts(dir, func() (*RedisServer, error) { return launchRedis(bin, dir, args) })
}

func launchRedis(bin, dir string, extra []string) (*RedisServer, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "redis.log")
	args := []string{
		"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--logfile", logPath, "--daemonize", "no",
		// The server is ours alone; protected mode only gets in the way
		// of nothing here, but keep the default behaviour explicit.
		"--protected-mode", "yes",
	}
	args = append(args, extra...)
	// Redis runs fine as root; no credential switch needed.
	cmd := command(nil, dir, bin, args...)
	p, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	s := &RedisServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Port: port, Dir: dir, proc: p}
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := ping(s.Addr)
		if err == nil {
			return s, nil
		}
		if p.exited() || time.Now().After(deadline) {
			p.stop(syscall.SIGKILL, time.Second)
			return nil, fmt.Errorf("redis-server on port %d did not start: %v; log: %s", port, err, tail(logPath, 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ping sends one inline PING and expects +PONG: enough to know the server
// accepts commands, without pulling a client library into this package.
func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Restart stops the server (SIGTERM: with appendonly it flushes the AOF)
// and starts it again on the same port and directory, so clients reconnect
// to the same address and find the data the server persisted.
func (s *RedisServer) Restart(tb testing.TB) {
	tb.Helper()
	s.proc.stop(syscall.SIGTERM, 10*time.Second)
	args := s.proc.cmd.Args[1:]
	bin := s.proc.cmd.Path
	p, err := startLocked(command(nil, s.Dir, bin, args...))
	if err != nil {
		tb.Fatalf("testserver: restart redis: %v", err)
	}
	s.proc = p
	deadline := time.Now().Add(30 * time.Second)
	for ping(s.Addr) != nil {
		if p.exited() || time.Now().After(deadline) {
			tb.Fatalf("testserver: redis did not restart; log: %s", tail(filepath.Join(s.Dir, "redis.log"), 2000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *RedisServer) stop() {
	s.proc.stop(syscall.SIGTERM, 10*time.Second)
	os.RemoveAll(s.Dir)
}

// Pause stops the server with SIGSTOP: its port and connections stay open
// and nothing answers, a hung server as its clients see one. Resume, or
// the end of tb, lets it go on (a stopped server would hold up its own
// stop). Pause only a server of StartRedis: the shared one is other
// tests' too.
func (s *RedisServer) Pause(tb testing.TB) {
	tb.Helper()
	if err := s.proc.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		tb.Fatalf("testserver: pause redis: %v", err)
	}
	tb.Cleanup(func() { _ = s.proc.cmd.Process.Signal(syscall.SIGCONT) })
}

// Resume lets a paused server go on (SIGCONT).
func (s *RedisServer) Resume(tb testing.TB) {
	tb.Helper()
	if err := s.proc.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		tb.Fatalf("testserver: resume redis: %v", err)
	}
}
