package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestStalledStoreIsAnswered503WithRetryAfterWithinTheBudget is finding 7
// of issue 20: with the database paused, a claim got no answer when the
// server's WriteTimeout (the lease) passed, and its write completed once
// the database came back: the client saw an empty reply, never the
// documented 503 + Retry-After. Here the test database is stopped with
// SIGSTOP (its processes alive, its sockets open, nothing answered, as a
// hung server looks to a client) and a claim and a settle must each get
// 503 outcome_unknown with Retry-After within their budget plus
// writeReserve; once the database continues, the repeated claim is
// accepted (the contract: repeat the same request).
//
// Not parallel: it stops the server the package's tests share.
func TestStalledStoreIsAnswered503WithRetryAfterWithinTheBudget(t *testing.T) {
	for _, store := range e2eStores {
		t.Run("store="+store, func(t *testing.T) {
			const lease = 3 * time.Second // the finding's -lock-ttl
			c := startCluster(t, clusterOpts{store: store, nodes: 1, settleEvery: time.Hour, compensate: time.Hour, lockTTL: lease})
			n := c.nodes[0]
			due := c.open(n, e2eSpec("STALL-DUE", 1, 1))
			c.open(n, e2eSpec("STALL-OPEN", 1, 60))
			sleepUntil(due)

			resume := pauseServer(t, map[string][]string{"postgres": {"postgres"}, "mariadb": {"mariadbd"}}[store]...)
			for _, call := range []struct {
				what, url string
				body      any
				header    []string
				budget    time.Duration
			}{
				{"claim", n.player + "/api/loot/intent", map[string]string{"sessionNo": "STALL-OPEN", "intentType": "NEED"},
					[]string{"X-Player-Id", "1001"}, claimBudget},
				{"settle", n.internal + settlePath, map[string]string{"sessionNo": "STALL-DUE"}, nil, lease},
			} {
				// The client waits 2 s past the server's last chance to
				// answer, so a missing answer shows as one, not as the
				// client's own timeout cutting a late 503 short.
				client := &http.Client{Timeout: call.budget + writeReserve + 2*time.Second}
				req := newRequest(t, "POST", call.url, call.body)
				for i := 0; i+1 < len(call.header); i += 2 {
					req.Header.Set(call.header[i], call.header[i+1])
				}
				begin := time.Now()
				resp, err := client.Do(req)
				took := time.Since(begin)
				if err != nil {
					t.Errorf("%s with the database stopped: no answer (%v after %v), want 503 outcome_unknown within %v + %v",
						call.what, err, took.Round(time.Millisecond), call.budget, writeReserve)
					continue
				}
				var out map[string]any
				readJSON(t, resp, &out)
				if resp.StatusCode != 503 || out["code"] != "outcome_unknown" || resp.Header.Get("Retry-After") != strconv.Itoa(retryAfter) {
					t.Errorf("%s with the database stopped: %d %v Retry-After %q, want 503 outcome_unknown Retry-After %d",
						call.what, resp.StatusCode, out, resp.Header.Get("Retry-After"), retryAfter)
				}
				if took > call.budget+writeReserve {
					t.Errorf("%s with the database stopped: answered after %v, want within its budget %v + writeReserve %v",
						call.what, took.Round(time.Millisecond), call.budget, writeReserve)
				}
				t.Logf("%s with the database stopped: %d after %v", call.what, resp.StatusCode, took.Round(time.Millisecond))
			}
			resume()
			// The pool's connections cut at the deadline are redialled:
			// a repeat may meet one more failure before it lands.
			end := time.Now().Add(10 * time.Second)
			for {
				st, out := c.claim(n, 1001, "STALL-OPEN", "NEED")
				if st == 200 {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("the repeated claim after the database continued: %d %v, want 200 within 10s", st, out)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if got := c.count("SELECT COUNT(*) FROM loot_intent WHERE session_no = ?", "STALL-OPEN"); got != 1 {
				t.Errorf("STALL-OPEN has %d claims after the stalled claim and its repeats, want 1", got)
			}
		})
	}
}

// readJSON decodes resp's body into out (left empty if it is not JSON).
func readJSON(t testing.TB, resp *http.Response, out *map[string]any) {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("reading the answer: %v", err)
	}
	if json.Unmarshal(raw, out) != nil {
		*out = map[string]any{"raw": string(raw)}
	}
}

// pauseServer stops (SIGSTOP) every process under this test process whose
// command name is one of comms, the way a hung server looks to its
// clients: connections stay open and nothing answers. It returns the
// function that continues them (SIGCONT), which also runs when t ends.
func pauseServer(t *testing.T, comms ...string) func() {
	t.Helper()
	pids := descendants(t, os.Getpid(), comms)
	if len(pids) == 0 {
		t.Fatalf("no process named %v under this test process to stop", comms)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatalf("SIGSTOP %d: %v", pid, err)
		}
	}
	resume := sync.OnceFunc(func() {
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	})
	t.Cleanup(resume)
	return resume
}

// descendants lists the processes under root (from /proc) whose command
// name is one of comms.
func descendants(t *testing.T, root int, comms []string) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	children := map[int][]int{}
	comm := map[int]string{}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			continue // exited since the glob
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		s := string(b)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open {
			continue
		}
		pid, err1 := strconv.Atoi(strings.TrimSpace(s[:open]))
		f := strings.Fields(s[close+1:])
		if err1 != nil || len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		children[ppid] = append(children[ppid], pid)
		comm[pid] = s[open+1 : close]
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			for _, name := range comms {
				if comm[c] == name {
					out = append(out, c)
				}
			}
			queue = append(queue, c)
		}
	}
	return out
}
