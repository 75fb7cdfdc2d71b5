package testserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onceproof/onceproof/internal/pinned"
)

// findBinary looks name up on PATH, then in /usr/sbin (mariadbd; not on a
// non-root user's PATH), then in the Debian PostgreSQL layout
// (/usr/lib/postgresql/VERSION/bin), newest version first.
func findBinary(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	dirs = append([]string{"/usr/sbin"}, dirs...)
	for _, d := range dirs {
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on PATH, in /usr/sbin or in /usr/lib/postgresql/*/bin", name)
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// freePort asks the kernel for a free loopback port. Another process may take
// it before the server binds it; callers retry a failed start with a new port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tryPorts runs launch up to three times and returns its first server: a
// port from freePort can be taken before the server binds it, and three
// tries make that race practically irrelevant. When all fail it removes
// dir, the server's temporary directory.
func tryPorts[S any](dir string, launch func() (S, error)) (S, error) {
	var lastErr error
	for range 3 {
		s, err := launch()
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	os.RemoveAll(dir)
	var zero S
	return zero, lastErr
}

// unprivileged returns the credential to run a server under when this process
// is root (PostgreSQL and MariaDB refuse to run as root), or nil when it is
// not root: that of the first of users that exists (the server's own user,
// which its Debian package creates, then "nobody" on machines without it).
func unprivileged(users ...string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range users {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.Atoi(u.Uid)
		gid, err2 := strconv.Atoi(u.Gid)
		if err1 != nil || err2 != nil {
			continue
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, fmt.Errorf("running as root and found none of the users %v to run the server as", users)
}

// ownedTempDir makes a temporary directory named from prefix and hands it
// to cred, for a server's data.
func ownedTempDir(prefix string, cred *syscall.Credential) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if err := chownTree(dir, cred); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("chown %s: %w", dir, err)
	}
	return dir, nil
}

// chownTree hands dir (and what is in it) to cred, so a server running as an
// unprivileged user can write its data there.
func chownTree(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, int(cred.Uid), int(cred.Gid))
	})
}

// command builds a command that runs as cred and dies with this process.
func command(cred *syscall.Credential, dir, bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	// Pdeathsig: if the test binary dies (kill -9, a panic in another
	// goroutine), the kernel kills the server instead of leaving it running.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// process is a running server.
type process struct {
	cmd  *exec.Cmd
	done <-chan error // receives Wait's result once
	err  error
	exit bool
}

// startLocked starts cmd so that its parent-death signal fires only when
// the test binary dies (package pinned).
func startLocked(cmd *exec.Cmd) (*process, error) {
	done, err := pinned.Start(cmd)
	if err != nil {
		return nil, err
	}
	return &process{cmd: cmd, done: done}, nil
}

// StartChild starts cmd, a process a test runs (a server, the binary under
// test), so that it dies with the test binary: with the parent-death
// signal SIGKILL, from a locked thread (see startLocked). The channel
// receives cmd.Wait's result when the process exits.
func StartChild(cmd *exec.Cmd) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	p, err := startLocked(cmd)
	if err != nil {
		return nil, err
	}
	return p.done, nil
}

// exited reports whether the process has exited (without blocking).
func (p *process) exited() bool {
	if p.exit {
		return true
	}
	select {
	case p.err = <-p.done:
		p.exit = true
	default:
	}
	return p.exit
}

// stop sends sig and waits up to grace for the exit, then kills.
func (p *process) stop(sig os.Signal, grace time.Duration) {
	if p.exited() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case p.err = <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		p.err = <-p.done
	}
	p.exit = true
}

// tail returns the last n bytes of the file at path, for error messages.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
