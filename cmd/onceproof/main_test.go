package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
	"github.com/onceproof/onceproof/impls"
	lootimpls "github.com/onceproof/onceproof/impls/loot"
	"github.com/onceproof/onceproof/props"
)

// The command's test registry: faultstest's designs under the names and
// declarations these tests expect.
var (
	keyed = faultstest.As("test-keyed", faultstest.Keyed{}, faults.Declaration{})
	// memo credits unkeyed and remembers in memory: a crash (or another
	// node) makes it credit twice. It declares nothing, so the matrix
	// disagrees.
	memo = faultstest.As("test-memo", faultstest.Memo{}, faults.Declaration{})
	// memoDeclared is memo declaring the NoDup it shows under crash.
	memoDeclared = faultstest.As("test-memo-declared", faultstest.Memo{}, faults.Declaration{Fails: []faults.Expect{{
		Families: []faults.Family{faults.Families.Crash}, Props: []faults.Property{faults.Properties.NoDup},
		Why: "a crash after its unkeyed credit loses the memory of it, and the retry credits again"}}})
)

var testDesigns = impls.Registry[faults.Design]{keyed, memo, memoDeclared}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, registries{settle: testDesigns, loot: lootimpls.All()}, &o, &e)
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
		{[]string{"replay", noDesign}, "names no design in a '# design:' header; give -design (valid designs: test-keyed, test-memo, test-memo-declared)"},
		{[]string{"replay", noDesign, "-design", "nope"}, `unknown design "nope" (valid designs: test-keyed, test-memo, test-memo-declared;`},
		{[]string{"explain"}, "explain wants one schedule file, got 0"},
		{[]string{"matrix", "-designs", "nope"}, `unknown design "nope" (valid designs: test-keyed, test-memo, test-memo-declared;`},
		{[]string{"matrix", "-families", "late,nope"}, `unknown family "nope" (want one of clean, duplicate, late,`},
		{[]string{"matrix", "-families", "concurrent+crash"}, `joins concurrent with a family that injects faults`},
		{[]string{"matrix", "-n", "0"}, "matrix: -n must be >= 1, got 0"},
		{[]string{"matrix", "-seed", "0"}, "matrix: -seed must be >= 1, got 0"},
		{[]string{"matrix", "-parallel", "-1"}, "matrix: -parallel must be >= 0, got -1"},
		{[]string{"matrix", "-out", writeFile(t, "a-file", "x")}, "is not a directory"},
		{[]string{"list", "x"}, "list takes no arguments"},
		{[]string{"help", "nope"}, `unknown command "nope"`},
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
	// Compared with its whitespace collapsed: the table is padded and the
	// prose wrapped (TestGeneratedMarkdownLinesAreShort).
	flat := strings.Join(strings.Fields(string(md)), " ")
	for _, want := range []string{
		"Generated by `onceproof matrix -families clean,crash -n 30 -out " + out + "`",
		"| design | clean | crash |",
		"| [test-keyed][] | ✓ | ✓ |",
		"| [test-memo][] | ✓ | [✗!][1] |",
		"| [test-memo-declared][] | ✓ | [✗][2] |",
		"[1]: counterexamples/test-memo--crash.md [2]: counterexamples/test-memo-declared--crash.md [test-keyed]: #test-keyed",
		"- crash: fails: NoDup. Counterexample: [NoDup](counterexamples/test-memo--crash.md) (1 settlements, 1 deliveries, 1 faults) *unexpected: declared holds*",
		"Declared: - fails NoDup under crash: a crash after its unkeyed credit loses the memory of it, and the retry credits again. Holds elsewhere.",
		"### test-keyed Declared: holds in every family.",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("matrix.md lacks %q (whitespace collapsed):\n%s", want, md)
		}
	}
	sched := filepath.Join(out, "counterexamples", "test-memo--crash.sched")
	code, replay, _ := runCLI("replay", sched)
	if code != exitFailed || !strings.Contains(replay, "NoDup fails") || !strings.Contains(replay, "reproduced: test-memo on "+sched+": NoDup fails (exit 1)") {
		t.Errorf("replay of the written counterexample: exit %d:\n%s", code, replay)
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

// A run removes what an earlier run wrote and no longer produces, and
// nothing else: the user's own files in -out survive, and a file of theirs
// where the matrix would write is not overwritten (the run refuses).
func TestMatrixRemovesOnlyWhatItWrote(t *testing.T) {
	out := t.TempDir()
	mine := []string{filepath.Join(out, "notes.md"), filepath.Join(out, "counterexamples", "mine.sched"), filepath.Join(out, "counterexamples", "mine.md")}
	if err := os.MkdirAll(filepath.Join(out, "counterexamples"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range mine {
		if err := os.WriteFile(p, []byte("the user's"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, errs := runCLI("matrix", "-n", "30", "-families", "clean,crash", "-out", out); code != exitFailed {
		t.Fatalf("first run: exit %d, want 1; stderr %s", code, errs)
	}
	memo := filepath.Join(out, "counterexamples", "test-memo--crash.sched")
	if _, err := os.Stat(memo); err != nil {
		t.Fatalf("the first run wrote no counterexample: %v", err)
	}
	// The second run has no crash column: the first run's counterexample
	// goes, the user's files stay.
	if code, _, errs := runCLI("matrix", "-n", "30", "-families", "clean", "-out", out); code != exitOK {
		t.Fatalf("second run: exit %d, want 0; stderr %s", code, errs)
	}
	if _, err := os.Stat(memo); !os.IsNotExist(err) {
		t.Errorf("%s, written by the first run and not by the second, was not removed (err %v)", memo, err)
	}
	for _, p := range mine {
		if b, err := os.ReadFile(p); err != nil || string(b) != "the user's" {
			t.Errorf("the user's file %s was touched: %q, %v", p, b, err)
		}
	}

	// A matrix.md the user wrote, with no manifest listing it: refused.
	theirs := t.TempDir()
	if err := os.WriteFile(filepath.Join(theirs, "matrix.md"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("matrix", "-n", "1", "-families", "clean", "-out", theirs)
	if code != exitBadUse || !strings.Contains(errs, "refusing to overwrite") || strings.Count(errs, "\n") != 1 {
		t.Errorf("matrix into a directory holding the user's matrix.md: exit %d, stderr %q; want exit 2 refusing to overwrite", code, errs)
	}
	if b, _ := os.ReadFile(filepath.Join(theirs, "matrix.md")); string(b) != "mine" {
		t.Errorf("the user's matrix.md was overwritten: %q", b)
	}
}

func TestHelpListsEveryFlagWithItsDefaultAndExitsZero(t *testing.T) {
	for _, args := range [][]string{{"matrix", "-h"}, {"help", "matrix"}} {
		code, out, errs := runCLI(args...)
		if code != exitOK || errs != "" {
			t.Fatalf("onceproof %q: exit %d, stderr %q; want 0 and nothing on stderr", args, code, errs)
		}
		for _, want := range []string{"-designs", "-families", "-n int", "(default 200)", "-seed", "(default 1)", "-parallel", "-out", "-store", "-json", "-v"} {
			if !strings.Contains(out, want) {
				t.Errorf("onceproof %q lacks %q:\n%s", args, want, out)
			}
		}
	}
	code, out, _ := runCLI("replay", "-h")
	if code != exitOK || !strings.Contains(out, "-design") || !strings.Contains(out, "exit 1 when a property fails") {
		t.Errorf("replay -h: exit %d:\n%s", code, out)
	}
	code, out, _ = runCLI("help")
	if code != exitOK || !strings.Contains(out, "onceproof list") || !strings.Contains(out, "exit codes") {
		t.Errorf("help: exit %d:\n%s", code, out)
	}
}

func TestListNamesEveryDesignFamilyAndProperty(t *testing.T) {
	code, out, _ := runCLI("list")
	if code != exitOK {
		t.Fatalf("list exit %d", code)
	}
	want := []string{"test-keyed", "test-memo"}
	for _, f := range faults.World.Families {
		want = append(want, string(f))
	}
	for _, p := range faults.World.Properties {
		want = append(want, string(p))
	}
	entries := listed(out)
	for _, w := range want {
		if _, ok := entries[w]; !ok {
			t.Errorf("list lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "not a family") || strings.Contains(out, "not a property") {
		t.Errorf("a family or property has no one-line doc:\n%s", out)
	}
}

// A declared failure that did not show because -n is tiny gets a hint,
// not only "N cells disagree".
func TestTinyNDisagreementComesWithAHint(t *testing.T) {
	// A crash schedule that misses memo's weak point (no crash right after
	// its credit): with -n 1 on it, memo's declared NoDup does not show.
	seed := uint64(1)
	for ; len(props.Judge(faults.Run(memo, faults.World.Generate(faults.Families.Crash, seed), faults.RunOptions{})).Failed()) > 0; seed++ {
	}
	code, out, _ := runCLI("matrix", "-designs", "test-memo-declared", "-families", "crash", "-n", "1", "-seed", fmt.Sprint(seed), "-out", t.TempDir())
	if code != exitFailed || !strings.Contains(out, "hint: 1 of them are declared failures that did not show in 1 schedules per cell") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

// -json - writes the whole matrix as JSON on stdout, alone: a script reads
// every cell's verdicts, counterexamples and coverage from it.
func TestMatrixJSONOnStdout(t *testing.T) {
	code, out, errs := runCLI("matrix", "-families", "crash", "-n", "5", "-out", t.TempDir(), "-json", "-")
	if code != exitFailed { // test-memo fails undeclared
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	var m props.Matrix
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("stdout is not the matrix as JSON: %v\n%.300s", err, out)
	}
	if len(m.Rows) != 3 || m.Rows[1].Cells[0].Coverage["crash"] == 0 || len(m.Rows[1].Cells[0].Counterexamples) == 0 {
		t.Errorf("the JSON lacks rows, coverage or counterexamples: %+v", m.Rows)
	}
	if !strings.Contains(errs, "wrote ") {
		t.Errorf("the human lines did not go to stderr: %q", errs)
	}
}

// The loot subject: list names its designs, families and properties; a
// matrix of it writes its files and agrees with the declarations; replay
// reads the subject from a loot schedule's family header and reproduces
// its failure; -store is refused for it.
func TestLootSubjectThroughTheCommand(t *testing.T) {
	code, out, _ := runCLI("list")
	for _, w := range []string{"loot-ref", "check-then-claim", "compensation-race", "FrozenClaims"} {
		if _, ok := listed(out)[w]; code != exitOK || !strings.Contains(out, "loot designs") || !ok {
			t.Errorf("list lacks %q (exit %d)", w, code)
		}
	}
	dir := t.TempDir()
	code, out, errs := runCLI("matrix", "-subject", "loot", "-designs", "loot-ref,check-then-claim", "-families", "clean,late-claim", "-out", dir)
	if code != exitOK {
		t.Fatalf("matrix -subject loot: exit %d\n%s%s", code, out, errs)
	}
	md, err := os.ReadFile(filepath.Join(dir, "matrix.md"))
	if err != nil || !strings.Contains(string(md), "# Design matrix: loot") {
		t.Fatalf("matrix.md: %v\n%.300s", err, md)
	}
	sched := filepath.Join(dir, "counterexamples", "check-then-claim--late-claim.sched")
	code, out, _ = runCLI("replay", sched)
	if code != exitFailed || !strings.Contains(out, "reproduced: check-then-claim") || !strings.Contains(out, "FrozenClaims fails") {
		t.Errorf("replay %s: exit %d:\n%s", sched, code, out)
	}
	if code, _, errs := runCLI("replay", sched, "-design", "ref"); code != exitBadUse || !strings.Contains(errs, `unknown loot design "ref"`) {
		t.Errorf("replay of a loot schedule on a settlement design: exit %d, %q", code, errs)
	}
}
