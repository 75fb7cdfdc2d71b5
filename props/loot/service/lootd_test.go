package lootservice_test

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
	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

func TestMain(m *testing.M) { testserver.Main(m) }

var (
	buildOnce sync.Once
	binDir    string
	binErr    error
)

// lootdBinary builds cmd/lootd once per test binary.
func lootdBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "lootservice-"); binErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(binDir, "lootd"), "github.com/onceproof/onceproof/cmd/lootd").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build ./cmd/lootd: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "lootd")
}

// startLootd runs lootd with args on loopback ports of its choosing,
// players named by X-Player-Id (the default spec's auth), and stops it
// when t ends (SIGTERM; its log is printed if t failed).
func startLootd(t *testing.T, args ...string) lootservice.Target {
	t.Helper()
	cmd := exec.Command(lootdBinary(t), append([]string{"-listen", "127.0.0.1:0", "-internal", "127.0.0.1:0", "-player-header", "X-Player-Id"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	done, err := testserver.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	listening := make(chan lootservice.Target, 1)
	var logMu sync.Mutex
	var log []string
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log = append(log, sc.Text())
			logMu.Unlock()
			var rec struct{ Msg, Player, Internal string }
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.Msg == "listening" {
				listening <- lootservice.Target{Player: "http://" + rec.Player, Internal: "http://" + rec.Internal}
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
			logMu.Lock()
			defer logMu.Unlock()
			for _, l := range log {
				t.Log(l)
			}
		}
	})
	select {
	case tg := <-listening:
		return tg
	case err := <-done:
		t.Fatalf("lootd %v exited before listening: %v", args, err)
	case <-time.After(60 * time.Second):
		t.Fatalf("lootd %v did not log listening within 60s", args)
	}
	return lootservice.Target{}
}
