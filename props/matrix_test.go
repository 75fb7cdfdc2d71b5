package props

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onceproof/onceproof/faults"
)

var testFamilies = []faults.Family{faults.Families.Clean, faults.Families.Crash, faults.Families.MultiNode, faults.Families.Concurrent}

func TestMatrixIsTheSameWhateverTheParallelism(t *testing.T) {
	opt := MatrixOptions{Designs: []faults.Design{keyed, memo}, Families: testFamilies, N: 25, Seed: 7}
	opt.Parallel = 1
	one, _ := json.Marshal(RunMatrix(opt))
	opt.Parallel = 3
	three, _ := json.Marshal(RunMatrix(opt))
	if string(one) != string(three) {
		t.Errorf("the matrix depends on the parallelism:\n%s\nvs\n%s", one, three)
	}
}

func TestMatrixJudgesTheTestDesigns(t *testing.T) {
	m := RunMatrix(MatrixOptions{Designs: []faults.Design{keyed, memo}, Families: testFamilies, N: 25})
	got := map[string]string{}
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			got[r.Design+"/"+string(c.Family)] = c.Text()
		}
	}
	want := map[string]string{
		"test-keyed/clean": "holds", "test-keyed/crash": "holds", "test-keyed/multi-node": "holds", "test-keyed/concurrent": "holds",
		// memo credits a retry on another node, or after a crash, twice.
		"test-memo/clean": "holds", "test-memo/crash": "fails: NoDup", "test-memo/multi-node": "fails: NoDup", "test-memo/concurrent": "fails: NoDup",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	// memo declares NoDup under crash only.
	var mismatched []string
	for _, x := range m.Mismatches() {
		mismatched = append(mismatched, x.String())
	}
	wantMis := []string{
		"test-memo under multi-node: declared to hold, fails NoDup",
		"test-memo under concurrent: declared to hold, fails NoDup",
	}
	if diff := cmp.Diff(wantMis, mismatched); diff != "" {
		t.Errorf("mismatches (-want +got):\n%s", diff)
	}
}

func TestCellMismatch(t *testing.T) {
	for _, tc := range []struct {
		c    Cell
		want bool
	}{
		{Cell{Family: faults.Families.Late}, false},
		{Cell{Family: faults.Families.Late, Failed: []faults.Property{faults.Properties.NoDup}}, true},
		{Cell{Family: faults.Families.Late, Expected: []faults.Property{faults.Properties.NoDup}}, true}, // the checker lost its teeth
		{Cell{Family: faults.Families.Late, Failed: []faults.Property{faults.Properties.NoDup}, Expected: []faults.Property{faults.Properties.NoDup}}, false},
		{Cell{Family: faults.Families.Late, Failed: []faults.Property{faults.Properties.NoLoss}, Expected: []faults.Property{faults.Properties.NoDup}}, true},
		{Cell{Family: faults.Families.Late, Runs: 10, Unknown: 1}, true}, // unknown is not a pass
		// Nor is it where the design declares a failure: the unknown runs
		// may hide another.
		{Cell{Family: faults.Families.Late, Runs: 10, Unknown: 1, Failed: []faults.Property{faults.Properties.NoDup}, Expected: []faults.Property{faults.Properties.NoDup}}, true},
		// The concurrent family is judged like any other: its
		// interleavings are deterministic.
		{Cell{Family: faults.Families.Concurrent, Expected: []faults.Property{faults.Properties.HonestAck}}, true},
		{Cell{Family: faults.Families.Concurrent, Failed: []faults.Property{faults.Properties.NoDup}, Expected: []faults.Property{faults.Properties.HonestAck}}, true},
	} {
		if got := tc.c.Mismatch(); got != tc.want {
			t.Errorf("%+v: Mismatch() = %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestRunCellShrinksToTheMinimalCrash(t *testing.T) {
	c := runCell(memo, faults.Families.Crash, MatrixOptions{N: 20})
	if diff := cmp.Diff([]faults.Property{faults.Properties.NoDup}, c.Failed); diff != "" {
		t.Fatalf("Failed (-want +got):\n%s", diff)
	}
	if c.Mismatch() {
		t.Error("memo declares NoDup under crash; the cell should agree")
	}
	cx := c.Counterexamples[0]
	if cx.Name != "test-memo--crash" || len(cx.Schedule.Deliveries) != 1 || len(cx.Schedule.Faults) != 1 {
		t.Errorf("counterexample %s: %d deliveries, %d faults; want test-memo--crash with 1 delivery and 1 crash:\n%s",
			cx.Name, len(cx.Schedule.Deliveries), len(cx.Schedule.Faults), faults.World.Format(cx.Schedule))
	}
}
