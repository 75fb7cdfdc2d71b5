// Package instance starts the instances of a service under test from a
// command line template, waits until each listens, and puts process faults
// on them: kill -9, SIGSTOP and SIGCONT, restart on the same ports, and a
// clock skew per instance.
//
// The caller's duties:
//
//  1. Start a Fleet with Options; a template's placeholders are filled per
//     instance (see Options.Command).
//  2. Close it at the end (Start also closes it when its ctx ends): every
//     instance's process group is killed, so nothing outlives the run.
//  3. Take Faults into the run's record: each fault's time, target and kind.
package instance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/onceproof/onceproof/internal/pinned"
)

// Options says what to start. Keyed literals only.
type Options struct {
	// Command is the command line template of one instance: program and
	// arguments, each argument's placeholders filled per instance:
	//   {index}  the instance's number, 0 to N-1
	//   {dir}    Dir
	//   {skew}   the instance's Skew as a Go duration ("2s", "-3s", "0s")
	//   {NAME}   for each NAME in Ports: a free loopback port chosen by
	//            Start, kept across restarts ("{port}" by default)
	//   {NAME}   for each NAME in Vars: its value (e.g. {db}, {redis},
	//            {inventory}); a Vars key may not shadow the names above
	// Any other {word} is bad input, named in Start's error; text in
	// braces that is not a word (JSON, say) is left as it is.
	Command []string
	N       int    // how many instances, >= 1
	Dir     string // where each instance's stderr goes (instance-<i>.stderr, appended across restarts); must exist
	Env     []string
	// Skew is each instance's clock offset (missing entries are 0). With
	// {skew} in Command the program offsets its own clock (lootd's
	// -clock-skew: a Go program reads the vDSO clock, which libfaketime's
	// LD_PRELOAD cannot reach); without it an instance with a nonzero skew
	// runs under Debian's `faketime -f +Ns`, which a program whose time
	// calls go through libc (the JVM, C) honours.
	Skew []time.Duration
	// Ports names the ports each instance gets (default: "port").
	Ports []string
	// Ready is a URL template (placeholders as in Command) that answers 2xx
	// once the instance serves; "" waits for a TCP connect to the first
	// port.
	Ready        string
	ReadyTimeout time.Duration // per instance start; 0: 60 s
	Vars         map[string]string
	// Stderr, if set, also gets instance i's stderr (after its file): a
	// test that waits for a log line reads it there. A process's exit is
	// seen once all of its output is in.
	Stderr func(i int) io.Writer
	// Now stamps faults (time.Now if nil): the fleet reads no clock of its
	// own for the record.
	Now func() time.Time
	_   struct{}
}

// Kinds of fault, as Fault.Kind says them.
const (
	KindKill    = "kill"    // SIGKILL to the process group
	KindStop    = "stop"    // SIGSTOP to the process group
	KindCont    = "cont"    // SIGCONT to the process group
	KindRestart = "restart" // killed if alive, then started again on its ports
	KindTerm    = "term"    // SIGTERM to the process group: the instance's own shutdown
)

// StartedMsg is the msg of the JSON line (a Started) the fleet writes to
// an instance's stderr file before each start of it, so the file says
// what ran with which skew, restarts included.
const StartedMsg = "onceproof: instance started"

// Started is the fleet's line in an instance's stderr file.
type Started struct {
	Msg   string   `json:"msg"` // StartedMsg
	Index int      `json:"index"`
	Skew  string   `json:"skew"` // a Go duration: "0s", "2s", "-3s"
	Argv  []string `json:"argv"`
}

// Fault is one fault as it was put on an instance, for the record.
type Fault struct {
	At     time.Time
	Target int // instance index
	Kind   string
}

// Fleet is the running instances. Its methods are safe for concurrent use.
type Fleet struct {
	o      Options
	ports  []map[string]int
	mu     sync.Mutex
	procs  []*proc
	faults []Fault
	closed bool
	stop   func() bool // unregisters the ctx watch
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has been waited for
	err  error
	log  *os.File
}

var placeholder = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Start starts o.N instances and waits until each is ready. On error
// whatever it started is stopped. When ctx ends the fleet is closed.
func Start(ctx context.Context, o Options) (*Fleet, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	f := &Fleet{o: o, procs: make([]*proc, o.N)}
	for range o.N {
		ps := map[string]int{}
		for _, name := range o.Ports {
			p, err := freePort()
			if err != nil {
				return nil, err
			}
			ps[name] = p
		}
		f.ports = append(f.ports, ps)
	}
	for i := range o.N {
		if err := f.start(ctx, i); err != nil {
			f.Close()
			return nil, err
		}
	}
	f.stop = context.AfterFunc(ctx, func() { f.Close() })
	return f, nil
}

func (o *Options) check() error {
	if len(o.Command) == 0 || o.N < 1 || o.Dir == "" {
		return errors.New("instance: want a command, N >= 1 and a Dir")
	}
	if len(o.Skew) > o.N {
		return fmt.Errorf("instance: %d skews for %d instances", len(o.Skew), o.N)
	}
	if len(o.Ports) == 0 {
		o.Ports = []string{"port"}
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = 60 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	known := map[string]bool{"index": true, "dir": true, "skew": true}
	for _, p := range o.Ports {
		if known[p] {
			return fmt.Errorf("instance: port name %q is taken", p)
		}
		known[p] = true
	}
	for k := range o.Vars {
		if known[k] {
			return fmt.Errorf("instance: variable {%s} shadows a placeholder the fleet fills", k)
		}
	}
	for i, a := range append(append([]string{}, o.Command...), o.Ready) {
		for _, m := range placeholder.FindAllStringSubmatch(a, -1) {
			if _, ok := o.Vars[m[1]]; !ok && !known[m[1]] {
				where := fmt.Sprintf("argument %d %q", i, a)
				if i == len(o.Command) {
					where = fmt.Sprintf("the readiness URL %q", a)
				}
				return fmt.Errorf("instance: unknown placeholder {%s} in %s (known: {index} {dir} {skew}, the ports {%s}, and the variables given)",
					m[1], where, strings.Join(o.Ports, "} {"))
			}
		}
	}
	return nil
}

// fill fills s's placeholders for instance i (check has refused unknown ones).
func (f *Fleet) fill(s string, i int) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		name := m[1 : len(m)-1]
		switch name {
		case "index":
			return strconv.Itoa(i)
		case "dir":
			return f.o.Dir
		case "skew":
			return f.skew(i).String()
		}
		if p, ok := f.ports[i][name]; ok {
			return strconv.Itoa(p)
		}
		return f.o.Vars[name]
	})
}

func (f *Fleet) skew(i int) time.Duration {
	if i < len(f.o.Skew) {
		return f.o.Skew[i]
	}
	return 0
}

// argv is instance i's command line: the template filled, under faketime
// when it skews and does not take {skew} itself.
func (f *Fleet) argv(i int) []string {
	var args []string
	selfSkew := false
	for _, a := range f.o.Command {
		selfSkew = selfSkew || strings.Contains(a, "{skew}")
		args = append(args, f.fill(a, i))
	}
	if s := f.skew(i); s != 0 && !selfSkew {
		// faketime's relative offset, whole seconds as the "+Ns" form
		// takes them: a skew of a fraction of a second rounds toward zero.
		args = append([]string{"faketime", "-f", fmt.Sprintf("%+ds", int64(s/time.Second))}, args...)
	}
	return args
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the instance binds it: that start fails as an instance
// that exited before it was ready, naming its stderr.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs instance i and waits until it is ready.
func (f *Fleet) start(ctx context.Context, i int) error {
	argv := f.argv(i)
	log, err := os.OpenFile(filepath.Join(f.o.Dir, fmt.Sprintf("instance-%d.stderr", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(Started{Msg: StartedMsg, Index: i, Skew: f.skew(i).String(), Argv: argv})
	if _, err := log.Write(append(line, '\n')); err != nil {
		log.Close()
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), f.o.Env...)
	cmd.Stderr = log
	if f.o.Stderr != nil {
		cmd.Stderr = io.MultiWriter(log, f.o.Stderr(i))
	}
	// Its own process group, so a signal reaches what it starts too (faketime
	// forks the program); and killed if the harness dies first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	waited, err := pinned.Start(cmd)
	if err != nil {
		log.Close()
		return fmt.Errorf("instance %d: %v", i, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{}), log: log}
	go func() { p.err = <-waited; log.Close(); close(p.done) }()
	f.mu.Lock()
	closed := f.closed
	if !closed {
		f.procs[i] = p
	}
	f.mu.Unlock()
	if closed {
		p.signal(syscall.SIGKILL)
		<-p.done
		return errors.New("instance: fleet closed")
	}
	return f.waitReady(ctx, i, p)
}

func (f *Fleet) waitReady(ctx context.Context, i int, p *proc) error {
	deadline := time.Now().Add(f.o.ReadyTimeout)
	c := &http.Client{Timeout: time.Second}
	url := f.fill(f.o.Ready, i)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(f.ports[i][f.o.Ports[0]]))
	for {
		var err error
		if url == "" {
			var conn net.Conn
			if conn, err = net.DialTimeout("tcp", addr, time.Second); err == nil {
				conn.Close()
				return nil
			}
		} else {
			var resp *http.Response
			if resp, err = c.Get(url); err == nil {
				resp.Body.Close()
				if resp.StatusCode/100 == 2 {
					return nil
				}
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("instance %d (%s) exited before it was ready: %v; its stderr: %s", i, strings.Join(f.argv(i), " "), p.err, p.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("instance %d (%s) not ready within %v: %v; its stderr: %s", i, strings.Join(f.argv(i), " "), f.o.ReadyTimeout, err, p.log.Name())
		}
	}
}

// signal sends sig to p's process group.
func (p *proc) signal(sig syscall.Signal) error {
	select {
	case <-p.done:
		return nil // a dead instance takes no more signals
	default:
	}
	return syscall.Kill(-p.cmd.Process.Pid, sig)
}

// URL is instance i's base URL on its port called name ("http://127.0.0.1:N").
func (f *Fleet) URL(i int, name string) string {
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(f.ports[i][name]))
}

// Targets is every instance's base URL on its first port.
func (f *Fleet) Targets() []string {
	var out []string
	for i := range f.o.N {
		out = append(out, f.URL(i, f.o.Ports[0]))
	}
	return out
}

// Pid is instance i's process id now (0 if it was never started).
func (f *Fleet) Pid(i int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.procs[i] == nil {
		return 0
	}
	return f.procs[i].cmd.Process.Pid
}

// Faults is every fault put so far, in order.
func (f *Fleet) Faults() []Fault {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Fault(nil), f.faults...)
}

// fault sends sig to instance i's group and records kind.
func (f *Fleet) fault(i int, kind string, sig syscall.Signal) error {
	if i < 0 || i >= f.o.N {
		return fmt.Errorf("instance: no instance %d of %d", i, f.o.N)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return errors.New("instance: fleet closed")
	}
	if err := f.procs[i].signal(sig); err != nil {
		return fmt.Errorf("instance %d: %s: %v", i, kind, err)
	}
	f.faults = append(f.faults, Fault{At: f.o.Now(), Target: i, Kind: kind})
	return nil
}

// Kill sends SIGKILL to instance i's process group: it dies without
// running any code of its own. It stays dead until Restart.
func (f *Fleet) Kill(i int) error {
	if err := f.fault(i, KindKill, syscall.SIGKILL); err != nil {
		return err
	}
	<-f.proc(i).done
	return nil
}

// Stop sends SIGSTOP to instance i's group: it keeps its connections and
// answers nothing until Cont.
func (f *Fleet) Stop(i int) error { return f.fault(i, KindStop, syscall.SIGSTOP) }

// Cont sends SIGCONT to instance i's group.
func (f *Fleet) Cont(i int) error { return f.fault(i, KindCont, syscall.SIGCONT) }

func (f *Fleet) proc(i int) *proc {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.procs[i]
}

// Restart kills instance i if it is alive (a stopped one too), starts it
// again on the same ports, and waits until it is ready.
func (f *Fleet) Restart(ctx context.Context, i int) error {
	if i < 0 || i >= f.o.N {
		return fmt.Errorf("instance: no instance %d of %d", i, f.o.N)
	}
	p := f.proc(i)
	_ = p.signal(syscall.SIGKILL)
	<-p.done
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return errors.New("instance: fleet closed")
	}
	f.faults = append(f.faults, Fault{At: f.o.Now(), Target: i, Kind: KindRestart})
	f.mu.Unlock()
	return f.start(ctx, i)
}

// Term asks instance i to shut down as it would in production: SIGCONT
// (a stopped one could not act on the rest), then SIGTERM to its group.
// It waits up to grace for the exit and returns its status as os/exec
// says it: nil for exit 0, an *exec.ExitError for another status or a
// signal. If the instance has not exited within grace it is killed and
// the error wraps ErrKilled. An instance that had exited already gets no
// signal: its status is returned. It stays down until Restart.
func (f *Fleet) Term(i int, grace time.Duration) error {
	if i < 0 || i >= f.o.N {
		return fmt.Errorf("instance: no instance %d of %d", i, f.o.N)
	}
	p := f.proc(i)
	select {
	case <-p.done:
		return p.err
	default:
	}
	_ = p.signal(syscall.SIGCONT)
	if err := f.fault(i, KindTerm, syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		return fmt.Errorf("instance %d: %w: no exit within %v of SIGTERM", i, ErrKilled, grace)
	}
}

// ErrKilled is Term's error when the instance outlived its grace.
var ErrKilled = errors.New("killed")

// Exited is closed once instance i's current process has exited (a
// Restart starts a new one, with a new channel); ExitStatus then says how.
func (f *Fleet) Exited(i int) <-chan struct{} { return f.proc(i).done }

// ExitStatus is how instance i's current process exited, as Term returns
// it; nil while it runs.
func (f *Fleet) ExitStatus(i int) error {
	p := f.proc(i)
	select {
	case <-p.done:
		return p.err
	default:
		return nil
	}
}

// Close kills every instance's process group (SIGCONT first, so a stopped
// one goes too) and waits for each. It is idempotent.
func (f *Fleet) Close() error {
	f.mu.Lock()
	f.closed = true
	procs := append([]*proc(nil), f.procs...)
	f.mu.Unlock()
	if f.stop != nil {
		f.stop()
	}
	for _, p := range procs {
		if p == nil {
			continue
		}
		// The whole group, even if the leader has exited: what it forked
		// (faketime's child) may still run.
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGCONT)
		<-p.done
	}
	return nil
}
