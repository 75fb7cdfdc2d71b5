package netfault_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/onceproof/onceproof/internal/testkit/testserver"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.StopAll()
	os.Exit(code)
}

func repro(t *testing.T) string {
	return fmt.Sprintf("reproduce: go test ./props/loot/service/netfault -run '^%s$'", strings.Split(t.Name(), "/")[0])
}

// echo starts a TCP server that answers each line with the same line.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, line); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// tick is a clock of 1 ms a reading: Events' times, without the wall clock.
func tick() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Millisecond) }
}

func proxy(t *testing.T, upstream string) (*netfault.Net, *netfault.Proxy) {
	t.Helper()
	n, err := netfault.New(netfault.Options{Now: tick()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	p, err := n.Proxy("echo", upstream)
	if err != nil {
		t.Fatal(err)
	}
	return n, p
}

// roundTrip sends line on a new connection through addr and reads the
// answer, giving up after wait (how a client sees a hung stream).
func roundTrip(addr, line string, wait time.Duration) (string, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return exchange(c, line, wait)
}

func exchange(c net.Conn, line string, wait time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestProxyPassesTrafficWithoutToxics(t *testing.T) {
	_, p := proxy(t, echo(t))
	if got, err := roundTrip(p.Addr(), "hello", 10*time.Second); err != nil || got != "hello" {
		t.Fatalf("echo through the proxy: %q, %v; %s", got, err, repro(t))
	}
}

// TestEachToxicIsSeenByAClient adds each toxic, checks what a client sees,
// removes it, and checks that traffic flows again.
func TestEachToxicIsSeenByAClient(t *testing.T) {
	cases := []struct {
		toxic netfault.Toxic
		// see checks what a client saw with the toxic on.
		see func(t *testing.T, addr string)
	}{
		{netfault.Toxic{Kind: netfault.Latency, Latency: 300 * time.Millisecond}, func(t *testing.T, addr string) {
			// A lower bound: load can only make the answer later.
			begin := time.Now()
			got, err := roundTrip(addr, "slow", 30*time.Second)
			if took := time.Since(begin); err != nil || got != "slow" || took < 300*time.Millisecond {
				t.Errorf("with 300ms latency: %q, %v after %v, want the echo after >= 300ms; %s", got, err, took, repro(t))
			}
		}},
		{netfault.Toxic{Kind: netfault.Stall}, func(t *testing.T, addr string) {
			if got, err := roundTrip(addr, "stuck", 300*time.Millisecond); !isTimeout(err) {
				t.Errorf("with the reply stalled: %q, %v, want the client's read to time out; %s", got, err, repro(t))
			}
		}},
		{netfault.Toxic{Kind: netfault.ResetPeer}, func(t *testing.T, addr string) {
			if got, err := roundTrip(addr, "reset", 10*time.Second); !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("with reset_peer: %q, %v, want ECONNRESET; %s", got, err, repro(t))
			}
		}},
		{netfault.Toxic{Kind: netfault.CutAfter, Bytes: 5}, func(t *testing.T, addr string) {
			if got, err := roundTrip(addr, "hello world", 10*time.Second); got != "hello" || !errors.Is(err, io.EOF) {
				t.Errorf("with the reply cut after 5 bytes: %q, %v, want %q then EOF; %s", got, err, "hello", repro(t))
			}
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.toxic.Kind), func(t *testing.T) {
			n, p := proxy(t, echo(t))
			if err := p.Add(tc.toxic); err != nil {
				t.Fatal(err)
			}
			tc.see(t, p.Addr())
			name := string(tc.toxic.Kind) + "_downstream"
			if err := p.Remove(name); err != nil {
				t.Fatal(err)
			}
			if got, err := roundTrip(p.Addr(), "again", 10*time.Second); err != nil || got != "again" {
				t.Errorf("after removing %s: %q, %v, want the echo; %s", name, got, err, repro(t))
			}
			ev := n.Events()
			if len(ev) != 2 || ev[0].Op != "add" || ev[0].Toxic != name || ev[0].Kind != string(tc.toxic.Kind) ||
				ev[0].Stream != netfault.Downstream || ev[1].Op != "remove" || ev[1].Toxic != name || !ev[0].At.Before(ev[1].At) {
				t.Errorf("events %+v, want the add then the remove of %s; %s", ev, name, repro(t))
			}
		})
	}
}

func TestPartitionsCutEveryConnectionUntilHealed(t *testing.T) {
	t.Run("refuse", func(t *testing.T) {
		_, p := proxy(t, echo(t))
		open, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer open.Close()
		if err := p.Partition(netfault.Refuse); err != nil {
			t.Fatal(err)
		}
		if _, err := net.Dial("tcp", p.Addr()); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial while partitioned: %v, want ECONNREFUSED; %s", err, repro(t))
		}
		if got, err := exchange(open, "lost", 10*time.Second); err == nil {
			t.Errorf("a connection open at the partition answered %q, want it closed; %s", got, repro(t))
		}
		if err := p.Heal(); err != nil {
			t.Fatal(err)
		}
		if got, err := roundTrip(p.Addr(), "back", 10*time.Second); err != nil || got != "back" {
			t.Errorf("after heal: %q, %v, want the echo on the same address; %s", got, err, repro(t))
		}
	})
	t.Run("hang", func(t *testing.T) {
		n, p := proxy(t, echo(t))
		if err := p.Partition(netfault.Hang); err != nil {
			t.Fatal(err)
		}
		if err := p.Partition(netfault.Hang); err == nil {
			t.Errorf("a second partition was taken; %s", repro(t))
		}
		if got, err := roundTrip(p.Addr(), "void", 300*time.Millisecond); !isTimeout(err) {
			t.Errorf("while hung: %q, %v, want the client to time out; %s", got, err, repro(t))
		}
		if err := p.Heal(); err != nil {
			t.Fatal(err)
		}
		if got, err := roundTrip(p.Addr(), "back", 10*time.Second); err != nil || got != "back" {
			t.Errorf("after heal: %q, %v, want the echo; %s", got, err, repro(t))
		}
		ev := n.Events()
		if len(ev) != 2 || ev[0].Op != "partition" || ev[0].Kind != "hang" || ev[1].Op != "heal" || ev[0].Target != "echo" {
			t.Errorf("events %+v, want partition hang then heal on echo; %s", ev, repro(t))
		}
	})
}

func TestARedisClientSeesThePartitionAndTheHeal(t *testing.T) {
	r := testserver.Redis(t)
	_, p := proxy(t, r.Addr)
	c := goredis.NewClient(&goredis.Options{Addr: p.Addr(), DialTimeout: time.Second, ReadTimeout: 500 * time.Millisecond, MaxRetries: -1})
	defer c.Close()
	ctx := t.Context()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING through the proxy: %v; %s", err, repro(t))
	}
	if err := p.Partition(netfault.Refuse); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Errorf("PING answered across a partition; %s", repro(t))
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Errorf("PING after heal: %v; %s", err, repro(t))
	}
	if err := p.Add(netfault.Toxic{Kind: netfault.Stall}); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx).Err(); !isTimeout(err) {
		t.Errorf("PING with the replies stalled: %v, want the client's read timeout; %s", err, repro(t))
	}
}

func TestBadToxicsAreRefusedAndNotRecorded(t *testing.T) {
	n, p := proxy(t, echo(t))
	for _, bad := range []netfault.Toxic{
		{Kind: "slow_close"},
		{Kind: netfault.Latency, Latency: 1500 * time.Microsecond},
		{Kind: netfault.CutAfter, Bytes: -1},
		{Kind: netfault.Stall, Stream: "sideways"},
	} {
		if err := p.Add(bad); err == nil {
			t.Errorf("Add(%+v) took it; %s", bad, repro(t))
		}
	}
	if err := p.Remove("nothing"); err == nil {
		t.Errorf("Remove of an absent toxic took it; %s", repro(t))
	}
	if _, err := n.Proxy("echo", "127.0.0.1:1"); err == nil {
		t.Errorf("a second proxy named echo was taken; %s", repro(t))
	}
	if ev := n.Events(); len(ev) != 0 {
		t.Errorf("refused changes were recorded: %+v; %s", ev, repro(t))
	}
}

func TestEventsReadBackFromJSON(t *testing.T) {
	n, p := proxy(t, echo(t))
	p.Add(netfault.Toxic{Kind: netfault.CutAfter, Bytes: 7, Stream: netfault.Upstream})
	p.Partition(netfault.Refuse)
	p.Heal()
	b, err := json.Marshal(n.Events())
	if err != nil {
		t.Fatal(err)
	}
	var back []netfault.Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(b) || len(back) != 3 || back[0].Params["bytes"] != 7 || back[0].Stream != netfault.Upstream {
		t.Errorf("events did not survive JSON:\n%s\n%s; %s", b, again, repro(t))
	}
}
