package main

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/onceproof/onceproof/internal/testkit/benchkit"
)

// BenchmarkLootHTTPPath measures lootd's own HTTP path, without a
// database or a second process: claims/s and settles/s through the
// player's and the internal listener (target=http: net/http over
// loopback, JSON both ways, the auth, the metrics and the log, all in
// this process) against the same memory store's loot.Service called
// directly (target=inproc), at 1, 16 and 64 callers. x_inproc is the HTTP
// rate over the in-process rate of the same conc in the same run: the
// share of a request's cost that is lootd's rather than the store's.
// allocs/op and B/op count the client's allocations too (one process);
// the client is kept lean (a body built once per op, the answer checked
// by a byte search) so that what moves is the server's.
//
// The store's clock is a counter the benchmark sets: a settle session's
// deadline passes by moving it, not by sleeping.
//
//	go test ./cmd/lootd -run '^$' -bench BenchmarkLootHTTPPath -benchmem -count 2
//
// Profiles of the HTTP side alone:
//
//	go test ./cmd/lootd -run '^$' -bench 'BenchmarkLootHTTPPath/op=claim/target=http/conc=16' -benchmem -cpuprofile cpu.out -memprofile mem.out
//	go tool pprof -top -nodecount 40 cmd/lootd.test cpu.out
func BenchmarkLootHTTPPath(b *testing.B) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	be := memoryBackendAt(now)
	// The production handler (main.go's) at its default level, into
	// io.Discard: what the hot path logs is paid for, as in production.
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := newServer(be, &authenticator{header: "X-Player-Id"}, time.Minute, log)
	if err != nil {
		b.Fatal(err)
	}
	player := httptest.NewServer(srv.playerHandler())
	b.Cleanup(player.Close)
	internal := httptest.NewServer(srv.internalHandler())
	b.Cleanup(internal.Close)
	// One idle connection per caller at the highest conc: no request waits
	// for a dial once the pool is warm.
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxIdleConns: 128}}
	b.Cleanup(client.CloseIdleConnections)

	var seq atomic.Int64 // session numbers, unique across sub-benchmarks
	for _, op := range []string{"claim", "settle"} {
		for _, conc := range []int{1, 16, 64} {
			var inproc float64
			for _, target := range []string{"inproc", "http"} {
				b.Run(fmt.Sprintf("op=%s/target=%s/conc=%d", op, target, conc), func(b *testing.B) {
					prefix := fmt.Sprintf("H%d-", seq.Add(1))
					var do func(i int) error
					switch op {
					case "claim":
						benchSessions(b, srv, prefix, (b.N+claimTeam-1)/claimTeam, claimTeam, 0, time.Hour)
						do = func(i int) error {
							no, p := prefix+strconv.Itoa(i/claimTeam), i%claimTeam+1
							if target == "inproc" {
								return srv.claimInProc(no, int64(p))
							}
							return post(client, player.URL+"/api/loot/intent", `{"sessionNo":"`+no+`","intentType":"NEED"}`,
								`"accepted":true`, "X-Player-Id", strconv.Itoa(p))
						}
					case "settle":
						benchSessions(b, srv, prefix, b.N, settleTeam, settleTeam, time.Hour)
						// Past every deadline just set (each is its open's
						// now plus the hour): all b.N sessions are due.
						clock.Add(int64(2 * time.Hour))
						do = func(i int) error {
							no := prefix + strconv.Itoa(i)
							if target == "inproc" {
								return srv.settleInProc(no)
							}
							return post(client, internal.URL+"/api/loot/settle", `{"sessionNo":"`+no+`"}`, `"outcome":"settled"`)
						}
					}
					b.ReportAllocs()
					rate := benchkit.Parallel(b, conc, func(i int64) error { return do(int(i - 1)) })
					b.ReportMetric(rate, op+"s/s")
					if target == "inproc" {
						inproc = rate
					} else if inproc > 0 {
						b.ReportMetric(rate/inproc, "x_inproc")
					}
				})
			}
		}
	}
}

// post sends body to url and wants a 200 whose body holds want.
func post(c *http.Client, url, body, want string, header ...string) error {
	req, err := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(want)) {
		return fmt.Errorf("POST %s %s: %d %s", url, body, resp.StatusCode, raw)
	}
	return nil
}

// BenchmarkLootHandler is the server's share of BenchmarkLootHTTPPath's
// claim alone: the player listener's handler (routing, auth, decode,
// the Service on the memory store, encode, metrics, log) called with a
// recorded response, no connection and no client, so allocs/op and B/op
// are the server's exactly.
//
//	go test ./cmd/lootd -run '^$' -bench BenchmarkLootHandler -benchmem -count 2
func BenchmarkLootHandler(b *testing.B) {
	claim := handledClaims(b, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		claim(i)
	}
}

// handledClaims opens sessions for n first claims and returns the i-th
// claim, through the player listener's handler at the production log
// level, recorded (httptest), failing tb unless it is a 200.
func handledClaims(tb testing.TB, n int) func(i int) {
	be := memoryBackendAt(func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) })
	log := slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv, err := newServer(be, &authenticator{header: "X-Player-Id"}, time.Minute, log)
	if err != nil {
		tb.Fatal(err)
	}
	h := srv.playerHandler()
	benchSessions(tb, srv, "R", (n+claimTeam-1)/claimTeam, claimTeam, 0, time.Hour)
	return func(i int) {
		no, p := "R"+strconv.Itoa(i/claimTeam), i%claimTeam+1
		req := httptest.NewRequest("POST", "/api/loot/intent", bytes.NewReader([]byte(`{"sessionNo":"`+no+`","intentType":"NEED"}`)))
		req.Header.Set("X-Player-Id", strconv.Itoa(p))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			tb.Fatalf("claim %s/%d: %d %s", no, p, w.Code, w.Body)
		}
	}
}

// A handled claim allocates no more than it did once made lean: 40
// allocations, counted by BenchmarkLootHandler with Go 1.26 (44 before
// the Debug guard, the shared Content-Type and the resolved 200 series;
// the request and the recorder, about 10 of them, are the test's). A
// change that puts allocation back on the hottest path fails here.
func TestClaimAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations are counted too; make test runs this once more without it (NORACE_LOOTD)")
	}
	const runs = 200
	claim := handledClaims(t, runs+1)
	i := 0
	got := testing.AllocsPerRun(runs, func() { claim(i); i++ })
	if got > 40 {
		t.Errorf("a handled claim allocates %.0f times, want at most 40 (go test ./cmd/lootd -count=1 -run TestClaimAllocations; profile: go test ./cmd/lootd -run '^$' -bench BenchmarkLootHandler -memprofilerate 1 -memprofile mem.out)", got)
	}
}
