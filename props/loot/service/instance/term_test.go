package instance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/instance"
)

// onTerm is the helper's SIGTERM handling, from INSTANCE_HELPER_TERM:
// "" the Go default (the signal ends it), "ignore", or an exit status the
// helper exits with after a SIGTERM.
func onTerm(mode string) {
	if mode == "" {
		return
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM)
	go func() {
		for range ch {
			if code, err := strconv.Atoi(mode); err == nil {
				os.Exit(code)
			}
		}
	}()
}

// lines is a concurrency-safe buffer, one per instance.
type lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// termFleet is one helper instance with SIGTERM mode mode, its stderr
// also copied to out.
func termFleet(t *testing.T, mode string, out *lines) (*instance.Fleet, string) {
	t.Helper()
	dir := t.TempDir()
	f, err := instance.Start(context.Background(), instance.Options{
		Command: []string{os.Args[0], "-test.run=^$", "{port}"}, N: 1, Dir: dir,
		Env: []string{"INSTANCE_HELPER=1", "INSTANCE_HELPER_TERM=" + mode}, Ready: "http://127.0.0.1:{port}/healthz",
		Skew: []time.Duration{0}, Stderr: func(int) io.Writer { return out },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, dir
}

// TestTermReturnsTheExitStatus: Term ends an instance by SIGTERM and says
// how it exited (0, another status, a stopped instance woken to hear it),
// kills one that outlives its grace and says so, and records the term.
func TestTermReturnsTheExitStatus(t *testing.T) {
	for _, c := range []struct {
		mode, name string
		stop       bool
		check      func(error) bool
	}{
		{"0", "exit 0", false, func(err error) bool { return err == nil }},
		{"7", "exit 7", false, func(err error) bool {
			var ee *exec.ExitError
			return errors.As(err, &ee) && ee.ExitCode() == 7
		}},
		{"0", "stopped, then exit 0", true, func(err error) bool { return err == nil }},
		{"ignore", "killed past its grace", false, func(err error) bool { return errors.Is(err, instance.ErrKilled) }},
	} {
		var out lines
		f, _ := termFleet(t, c.mode, &out)
		if c.stop {
			if err := f.Stop(0); err != nil {
				t.Fatal(err)
			}
		}
		pid := f.Pid(0)
		err := f.Term(0, 2*time.Second)
		if !c.check(err) {
			t.Errorf("%s: Term = %v\nTo reproduce: %sTestTermReturnsTheExitStatus", c.name, err, repro)
		}
		select {
		case <-f.Exited(0):
		default:
			t.Errorf("%s: Exited not closed after Term\nTo reproduce: %sTestTermReturnsTheExitStatus", c.name, repro)
		}
		if alive(pid) {
			t.Errorf("%s: pid %d outlived Term\nTo reproduce: %sTestTermReturnsTheExitStatus", c.name, pid, repro)
		}
		if again := f.Term(0, time.Second); (again == nil) != (err == nil) {
			t.Errorf("%s: Term of an exited instance = %v, want its status %v again\nTo reproduce: %sTestTermReturnsTheExitStatus", c.name, again, err, repro)
		}
		if k := f.Faults(); len(k) == 0 || k[len(k)-1].Kind != instance.KindTerm {
			t.Errorf("%s: Faults = %v, want a term last\nTo reproduce: %sTestTermReturnsTheExitStatus", c.name, k, repro)
		}
		if !strings.Contains(out.String(), "helper up on") {
			t.Errorf("%s: Stderr got %q, want the helper's output\nTo reproduce: %sTestTermReturnsTheExitStatus", c.name, out.String(), repro)
		}
	}
}

// TestEachStartIsLoggedWithItsSkew: before each start (a restart too) the
// instance's stderr file gets the fleet's line with its skew and argv.
func TestEachStartIsLoggedWithItsSkew(t *testing.T) {
	dir := t.TempDir()
	f, err := instance.Start(context.Background(), instance.Options{
		Command: []string{os.Args[0], "-test.run=^$", "-skew={skew}", "{port}"}, N: 2, Dir: dir,
		Env: []string{"INSTANCE_HELPER=1"}, Skew: []time.Duration{0, -3 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Restart(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"0s", "-3s -3s"} {
		b, err := os.ReadFile(filepath.Join(dir, "instance-"+strconv.Itoa(i)+".stderr"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range strings.Split(string(b), "\n") {
			var s instance.Started
			if json.Unmarshal([]byte(l), &s) == nil && s.Msg == instance.StartedMsg {
				got = append(got, s.Skew)
				if s.Index != i || !strings.Contains(strings.Join(s.Argv, " "), "-skew="+s.Skew) {
					t.Errorf("instance %d: %+v, want its index and argv\nTo reproduce: %sTestEachStartIsLoggedWithItsSkew", i, s, repro)
				}
			}
		}
		if strings.Join(got, " ") != want {
			t.Errorf("instance %d's starts say skews %q, want %q\n%s\nTo reproduce: %sTestEachStartIsLoggedWithItsSkew", i, got, want, b, repro)
		}
	}
}
