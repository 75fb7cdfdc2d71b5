package instance_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/instance"
)

// The test binary is its own instance: with INSTANCE_HELPER set it serves
// HTTP on its argument's port, answering "go=<unix seconds by Go's clock>
// libc=<unix seconds by date(1)> pid=<pid>".
func TestMain(m *testing.M) {
	if os.Getenv("INSTANCE_HELPER") != "" {
		helper(os.Args[len(os.Args)-1])
		return
	}
	os.Exit(m.Run())
}

func helper(port string) {
	fmt.Fprintln(os.Stderr, "helper up on", port)
	onTerm(os.Getenv("INSTANCE_HELPER_TERM"))
	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		out, _ := exec.Command("date", "+%s").Output()
		fmt.Fprintf(w, "go=%d libc=%s pid=%d", time.Now().Unix(), strings.TrimSpace(string(out)), os.Getpid())
	})
	fmt.Fprintln(os.Stderr, http.ListenAndServe("127.0.0.1:"+port, nil))
	os.Exit(1)
}

func start(t *testing.T, ctx context.Context, n int, skew ...time.Duration) *instance.Fleet {
	t.Helper()
	f, err := instance.Start(ctx, instance.Options{
		Command: []string{os.Args[0], "-test.run=^$", "{port}"}, N: n, Dir: t.TempDir(),
		Env: []string{"INSTANCE_HELPER=1"}, Skew: skew, Ready: "http://127.0.0.1:{port}/healthz",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// get answers the helper's fields, or err if it does not answer within d.
func get(url string, d time.Duration) (map[string]int64, error) {
	c := &http.Client{Timeout: d}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, kv := range strings.Fields(string(b)) {
		k, v, _ := strings.Cut(kv, "=")
		out[k], _ = strconv.ParseInt(v, 10, 64)
	}
	return out, nil
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

const repro = "go test ./props/loot/service/instance -run "

// TestUnknownPlaceholderIsBadInputNamingIt: a template's {word} that is
// neither the fleet's nor a variable is refused before anything starts.
func TestUnknownPlaceholderIsBadInputNamingIt(t *testing.T) {
	for _, c := range []struct {
		cmd   []string
		ready string
		want  string
	}{
		{[]string{"lootd", "-db", "{dbb}"}, "", "{dbb} in argument 2"},
		{[]string{"lootd", "-listen", "127.0.0.1:{port}"}, "http://127.0.0.1:{internal}/", "{internal} in the readiness URL"},
	} {
		_, err := instance.Start(context.Background(), instance.Options{Command: c.cmd, N: 1, Dir: t.TempDir(), Ready: c.ready, Vars: map[string]string{"db": "x"}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start(%q, ready %q) = %v, want an error naming %s\nTo reproduce: %sTestUnknownPlaceholderIsBadInputNamingIt", c.cmd, c.ready, err, c.want, repro)
		}
	}
	// JSON in an argument is not a placeholder.
	f, err := instance.Start(context.Background(), instance.Options{Command: []string{os.Args[0], "-test.run=^$", `{"a": 1}`, "{port}"}, N: 1, Dir: t.TempDir(), Env: []string{"INSTANCE_HELPER=1"}})
	if err != nil {
		t.Errorf("a JSON argument was refused: %v\nTo reproduce: %sTestUnknownPlaceholderIsBadInputNamingIt", err, repro)
	} else {
		f.Close()
	}
}

// TestKillStopContRestart: each fault does to the process what it says,
// a restart serves on the same URL, and every fault is in Faults in order.
func TestKillStopContRestart(t *testing.T) {
	f := start(t, context.Background(), 2)
	tg := f.Targets()
	before, err := get(tg[0], 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Kill(0); err != nil {
		t.Fatal(err)
	}
	if _, err := get(tg[0], time.Second); err == nil {
		t.Errorf("instance 0 answers after Kill\nTo reproduce: %sTestKillStopContRestart", repro)
	}
	if err := f.Restart(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	after, err := get(tg[0], 5*time.Second)
	if err != nil || after["pid"] == before["pid"] {
		t.Errorf("after Restart instance 0 answers %v, %v (pid before %d)\nTo reproduce: %sTestKillStopContRestart", after, err, before["pid"], repro)
	}
	if err := f.Stop(1); err != nil {
		t.Fatal(err)
	}
	if _, err := get(tg[1], 500*time.Millisecond); err == nil {
		t.Errorf("instance 1 answers while stopped\nTo reproduce: %sTestKillStopContRestart", repro)
	}
	if err := f.Cont(1); err != nil {
		t.Fatal(err)
	}
	if _, err := get(tg[1], 5*time.Second); err != nil {
		t.Errorf("instance 1 does not answer after Cont: %v\nTo reproduce: %sTestKillStopContRestart", err, repro)
	}
	var kinds []string
	for _, x := range f.Faults() {
		kinds = append(kinds, fmt.Sprintf("%s@%d", x.Kind, x.Target))
	}
	if got, want := strings.Join(kinds, " "), "kill@0 restart@0 stop@1 cont@1"; got != want {
		t.Errorf("Faults = %s, want %s\nTo reproduce: %sTestKillStopContRestart", got, want, repro)
	}
}

// TestCloseAndCancelLeaveNoProcess: Close kills a stopped instance too,
// and a fleet whose ctx ends is closed without Close.
func TestCloseAndCancelLeaveNoProcess(t *testing.T) {
	f := start(t, context.Background(), 2)
	pids := []int{f.Pid(0), f.Pid(1)}
	if err := f.Stop(1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	g := start(t, ctx, 1)
	pids = append(pids, g.Pid(0))
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("pid %d outlived its fleet\nTo reproduce: %sTestCloseAndCancelLeaveNoProcess", pid, repro)
		}
	}
}

// TestSkewReachesLibcNotGo: an instance with a skew and no {skew} in its
// command runs under faketime, whose offset date(1) (libc's clock) sees and
// a Go program's own clock (the vDSO, not libc) does not; this is why lootd
// takes its skew as a flag.
func TestSkewReachesLibcNotGo(t *testing.T) {
	if _, err := exec.LookPath("faketime"); err != nil {
		t.Skip("faketime is not installed (Debian: apt-get install faketime)")
	}
	// 3600 s: far above any delay between the reads, so the sign and size
	// of the offset cannot be a slow machine's doing.
	f := start(t, context.Background(), 2, 0, time.Hour)
	for i, want := range []int64{0, 3600} {
		got, err := get(f.Targets()[i], 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if d := got["libc"] - got["go"]; d < want-60 || d > want+60 {
			t.Errorf("instance %d: libc's clock is %d s off Go's, want %d\nTo reproduce: %sTestSkewReachesLibcNotGo", i, d, want, repro)
		}
		if d := got["go"] - time.Now().Unix(); d < -60 || d > 60 {
			t.Errorf("instance %d: Go's clock under faketime is %d s off, want 0 (has Go begun calling libc?)\nTo reproduce: %sTestSkewReachesLibcNotGo", i, d, repro)
		}
	}
}
