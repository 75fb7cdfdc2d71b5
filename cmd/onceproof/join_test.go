package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls"
	lootimpls "github.com/onceproof/onceproof/impls/loot"
)

// A joined family takes its declaration from its parts: test-memo-declared
// declares NoDup under crash only, and late+crash must expect the same
// (memo holds under late: without a crash or a second node its memory
// catches every copy). 30 schedules per cell is what
// TestMatrixWritesResultsAndExitsOneOnAnUndeclaredFailure needs for memo's
// crash failure to show; late+crash draws the same 1..4 crashes.
func TestJoinedFamilyFailsWhatItsPartIsDeclaredToFail(t *testing.T) {
	args := []string{"matrix", "-designs", "test-memo-declared", "-families", "late,crash,late+crash", "-n", "30", "-out", t.TempDir()}
	code, stdout, errs := runCLI(args...)
	if code != exitOK {
		t.Fatalf("onceproof %s: exit %d, want 0 (late+crash expects crash's NoDup); stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, stdout, errs)
	}
}

// An Expect naming the join wins over what its parts derive: declared to
// hold under late+crash, memo's NoDup there is a disagreement.
func TestAnExplicitJoinDeclarationOverridesItsParts(t *testing.T) {
	d := faultstest.As("test-memo-join-holds", faultstest.Memo{}, faults.Declaration{Fails: []faults.Expect{
		{Families: []faults.Family{faults.Families.Crash}, Props: []faults.Property{faults.Properties.NoDup},
			Why: "a crash after its unkeyed credit loses the memory of it, and the retry credits again"},
		{Families: []faults.Family{faults.Join(faults.Families.Late, faults.Families.Crash)},
			Why: "declared to hold, wrongly, so that the override shows"},
	}})
	args := []string{"matrix", "-families", "crash,late+crash", "-n", "30", "-out", t.TempDir()}
	var o, e bytes.Buffer
	code := run(args, registries{settle: impls.Registry[faults.Design]{d}, loot: lootimpls.All()}, &o, &e)
	want := "test-memo-join-holds under late+crash: declared to hold, fails NoDup"
	if code != exitFailed || !strings.Contains(o.String(), want) || strings.Contains(o.String(), "under crash:") {
		t.Fatalf("onceproof %s (registry: memo declaring crash NoDup and late+crash holds): exit %d, want 1 and only %q; stdout:\n%s\nstderr:\n%s",
			strings.Join(args, " "), code, want, o.String(), e.String())
	}
}

// The README's joined-family example exits 0 (it exited 1 while a join
// was expected to hold whatever its parts declared).
func TestReadmeJoinedFamilyExampleExitsZero(t *testing.T) {
	args := []string{"matrix", "-designs", "ref,four-sig", "-families", "late,crash,late+crash", "-n", "500", "-out", t.TempDir()}
	var o, e bytes.Buffer
	if code := run(args, registries{settle: impls.All(), loot: lootimpls.All()}, &o, &e); code != exitOK {
		t.Fatalf("onceproof %s: exit %d, want 0 as README.md says; stdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, o.String(), e.String())
	}
}

// `onceproof list` names each world's documented joins with what the pair
// makes that neither part does (its FamilyDoc), not the parts' docs
// joined.
func TestListShowsEachWorldsJoinsWithTheirReasons(t *testing.T) {
	code, out, errs := runCLI("list")
	if code != exitOK {
		t.Fatalf("onceproof list: exit %d; stderr:\n%s", code, errs)
	}
	for _, w := range []struct {
		joins []engine.Family
		doc   func(engine.Family) string
	}{{faults.World.Joins, faults.World.FamilyDoc}, {lootfaults.World.Joins, lootfaults.World.FamilyDoc}} {
		if len(w.joins) == 0 {
			t.Errorf("a world documents no joins (go test ./cmd/onceproof -run '^TestListShowsEachWorldsJoinsWithTheirReasons$')")
		}
		for _, f := range w.joins {
			if doc := w.doc(f); listed(out)[string(f)] == "" || !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(doc), " ")) || strings.Contains(doc, "; and ") {
				t.Errorf("onceproof list: want a line for the join %s with its own reason (got doc %q) (go test ./cmd/onceproof -run '^TestListShowsEachWorldsJoinsWithTheirReasons$'); output:\n%s", f, doc, out)
			}
		}
	}
}
