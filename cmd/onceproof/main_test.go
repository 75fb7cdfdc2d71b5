package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

// keyed credits under a grant key and keeps no memory: it holds everywhere.
type keyed struct{}

func (keyed) Name() string               { return "test-keyed" }
func (keyed) NewCluster() faults.Cluster { return keyedCluster{} }

type keyedCluster struct{}

func (keyedCluster) NewNode(id int, env faults.Env) faults.Node { return keyedNode{env} }

type keyedNode struct{ env faults.Env }

func (n keyedNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	applied, err := n.env.Credit(fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind), s, s.Room)
	switch {
	case err != nil:
		return faults.Nack, err
	case applied:
		return faults.AckCredited, nil
	}
	return faults.AckDuplicate, nil
}

// memo remembers what it credited in memory and credits unkeyed: a crash
// makes it credit twice. It declares nothing, so the matrix disagrees.
type memo struct{}

func (memo) Name() string               { return "test-memo" }
func (memo) NewCluster() faults.Cluster { return memoCluster{} }

type memoCluster struct{}

func (memoCluster) NewNode(id int, env faults.Env) faults.Node {
	return &memoNode{env: env, seen: map[int]bool{}}
}

type memoNode struct {
	env  faults.Env
	mu   sync.Mutex
	seen map[int]bool
}

func (n *memoNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.seen[s.ID] {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.seen[s.ID] = true
	return faults.AckCredited, nil
}

var testDesigns = []faults.Design{keyed{}, memo{}}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, testDesigns, &o, &e)
	return code, o.String(), e.String()
}

// crashAfterCredit is memo's counterexample: the node crashes after its
// unkeyed credit, the sender retries, the rebuilt node credits again.
const crashAfterCredit = `# design: test-memo
# fails: NoDup
family crash
nodes 1
retry 250ms
max-attempts 16
settle s0 player=1 room=1 match=1 round=1 kind=final net=10 final=true seq=1
deliver at=0s s0 node=0
fault attempt=0 effect=0 crash-after
`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReplayExitsOneAndShowsTheDoubleCredit(t *testing.T) {
	file := writeFile(t, "x.sched", crashAfterCredit)
	code, out, errs := runCLI("replay", file)
	if code != exitFailed {
		t.Fatalf("replay exit %d, want %d; stderr %q", code, exitFailed, errs)
	}
	for _, want := range []string{"node crashes (crash-after at credit)", "!! NoDup: s0", "NoDup fails:"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay output lacks %q:\n%s", want, out)
		}
	}
}

func TestReplayExitsZeroWhenEveryPropertyHolds(t *testing.T) {
	file := writeFile(t, "x.sched", crashAfterCredit)
	code, out, errs := runCLI("replay", file, "-design", "test-keyed")
	if code != exitOK {
		t.Fatalf("replay -design test-keyed exit %d, want 0; stdout:\n%s\nstderr %q", code, out, errs)
	}
	if !strings.Contains(out, "test-keyed holds every property") {
		t.Errorf("replay output:\n%s", out)
	}
}

func TestExplainRendersTimelineAndMermaid(t *testing.T) {
	file := writeFile(t, "x.sched", crashAfterCredit)
	code, out, _ := runCLI("explain", "-design", "test-memo", file)
	if code != exitOK {
		t.Fatalf("explain exit %d", code)
	}
	for _, want := range []string{"events:", "```mermaid\nsequenceDiagram\n", "S->>N0: t=0s attempt 0 s0 first", "Note over N0: CRASH crash-after at credit", "Note over N0: NoDup violated."} {
		if !strings.Contains(out, want) {
			t.Errorf("explain output lacks %q:\n%s", want, out)
		}
	}
}

func TestBadInputExitsTwoWithOneLine(t *testing.T) {
	noDesign := writeFile(t, "plain.sched", strings.Join(strings.Split(crashAfterCredit, "\n")[2:], "\n"))
	garbage := writeFile(t, "bad.sched", "family crash\nnodes one\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"replay", "/nonexistent/x.sched"}, "cannot read /nonexistent/x.sched"},
		{[]string{"replay", garbage}, "line 2: "},
		{[]string{"replay", noDesign}, "names no design in a '# design:' header; give -design (valid designs: test-keyed, test-memo)"},
		{[]string{"replay", noDesign, "-design", "nope"}, `unknown design "nope" (valid designs: test-keyed, test-memo)`},
		{[]string{"explain"}, "explain wants one schedule file, got 0"},
		{[]string{"matrix", "-designs", "nope"}, `unknown design "nope" (valid designs: test-keyed, test-memo)`},
		{[]string{"matrix", "-families", "late,nope"}, `unknown family "nope" (valid families: clean, duplicate, late,`},
		{[]string{"matrix", "-n", "0"}, "-n must be >= 1"},
		{[]string{"matrix", "-bogus"}, "flag provided but not defined: -bogus"},
	} {
		code, _, errs := runCLI(tc.args...)
		if code != exitBadUse || !strings.Contains(errs, tc.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("onceproof %q: exit %d, stderr %q; want exit 2 and one line containing %q", tc.args, code, errs, tc.want)
		}
	}
}

func TestMatrixWritesResultsAndExitsOneOnAnUndeclaredFailure(t *testing.T) {
	out := t.TempDir()
	// A stale counterexample from an earlier run must go.
	if err := os.MkdirAll(filepath.Join(out, "counterexamples"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(out, "counterexamples", "gone--late.md")
	if err := os.WriteFile(stale, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := runCLI("matrix", "-n", "30", "-families", "clean,crash", "-out", out)
	if code != exitFailed {
		t.Fatalf("matrix exit %d, want 1 (test-memo fails NoDup under crash, undeclared); stdout:\n%s\nstderr:\n%s", code, stdout, errs)
	}
	if !strings.Contains(stdout, "test-memo under crash: declared to hold, fails NoDup") {
		t.Errorf("matrix stdout does not name the mismatch:\n%s", stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "matrix.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| design | clean | crash |",
		"| [test-keyed](#test-keyed) | holds | holds |",
		"| [test-memo](#test-memo) | holds | [fails: NoDup](counterexamples/test-memo--crash.md) *unexpected: declared holds* |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("matrix.md lacks %q:\n%s", want, md)
		}
	}
	sched := filepath.Join(out, "counterexamples", "test-memo--crash.sched")
	code, replay, _ := runCLI("replay", sched)
	if code != exitFailed || !strings.Contains(replay, "NoDup fails") {
		t.Errorf("replay of the written counterexample: exit %d:\n%s", code, replay)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("stale counterexample %s was not removed (err %v)", stale, err)
	}
	sf, err := os.ReadFile(sched)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := props.ParseSchedFile(string(sf))
	if err != nil || len(parsed.Schedule.Deliveries) != 1 {
		t.Errorf("the counterexample is not minimal (want 1 delivery; err %v):\n%s", err, sf)
	}
}
