// Package lootdproc runs cmd/lootd as a child process for tests that judge
// it from outside (service mode): built once per test binary, started on
// loopback ports of its choosing, players named by the X-Player-Id header,
// stopped when the test ends.
package lootdproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
)

var (
	buildOnce sync.Once
	binPath   string
	binErr    error
)

// binary builds cmd/lootd once per test binary.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lootdproc-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "lootd")
		if out, err := exec.Command("go", "build", "-o", binPath, "github.com/onceproof/onceproof/cmd/lootd").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build ./cmd/lootd: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// Start runs lootd with args (and -player-header X-Player-Id, -listen and
// -internal on 127.0.0.1:0), waits for its "listening" line, and returns
// the base URLs of its player and internal listeners. When t ends it is
// sent SIGTERM (SIGKILL after 10 s), and its log is printed if t failed.
func Start(t *testing.T, args ...string) (player, internal string) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"-listen", "127.0.0.1:0", "-internal", "127.0.0.1:0", "-player-header", "X-Player-Id"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	done, err := testserver.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	type addrs struct{ player, internal string }
	listening := make(chan addrs, 1)
	var mu sync.Mutex
	var log []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			log = append(log, sc.Text())
			mu.Unlock()
			var rec struct{ Msg, Player, Internal string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				listening <- addrs{"http://" + rec.Player, "http://" + rec.Internal}
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			for _, l := range log {
				t.Log(l)
			}
		}
	})
	select {
	case a := <-listening:
		return a.player, a.internal
	case err := <-done:
		t.Fatalf("lootd %v exited before listening: %v", args, err)
	case <-time.After(60 * time.Second):
		t.Fatalf("lootd %v did not log listening within 60s", args)
	}
	return "", ""
}
