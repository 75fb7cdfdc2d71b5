package engine_test

import (
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// The toy matrix run in 1, 2, 3 and 5 shards and merged is the matrix run
// whole: every cell once, the same verdicts, counterexamples and coverage
// (rendered the same), each shard as many cells as the others to one. A merge with a shard missing, one given twice or one of another
// campaign fails, naming why.
func TestToyShardsMergeIntoTheWholeMatrix(t *testing.T) {
	const rerun = "go test -run '^TestToyShardsMergeIntoTheWholeMatrix$' ./engine"
	opt := engine.MatrixOptions[toyDesign]{Designs: toyDesigns, N: toyN, Parallel: 2}
	whole := renderMatrix(engine.RunMatrix(toyWorld, opt))
	for _, n := range []int{1, 2, 3, 5} {
		var shards []engine.Matrix[toySched, toyDetail]
		for i := range n {
			o := opt
			o.Shard = engine.Shard{I: i, N: n}
			sh := engine.RunMatrix(toyWorld, o)
			ran := 0
			for _, r := range sh.Rows {
				for _, c := range r.Cells {
					if c.Ran() {
						ran++
					}
				}
			}
			cells := len(toyDesigns) * len(sh.Families)
			if ran < cells/n || ran > cells/n+1 {
				t.Errorf("shard %d/%d ran %d of %d cells, want %d or %d (%s)", i, n, ran, cells, cells/n, cells/n+1, rerun)
			}
			shards = append(shards, sh)
		}
		// In reverse: the order of the shards does not matter.
		for i, j := 0, len(shards)-1; i < j; i, j = i+1, j-1 {
			shards[i], shards[j] = shards[j], shards[i]
		}
		m, err := engine.MergeShards(shards)
		if err != nil {
			t.Fatalf("%d shards: %v (%s)", n, err, rerun)
		}
		if got := renderMatrix(m); got != whole {
			t.Errorf("%d shards merged differ from the whole matrix (%s):\n%s\nwant\n%s", n, rerun, got, whole)
		}
		if n < 2 {
			continue
		}
		for _, bad := range []struct {
			shards []engine.Matrix[toySched, toyDetail]
			want   string
		}{
			{shards[1:], "run by no shard"},
			{append([]engine.Matrix[toySched, toyDetail]{shards[0]}, shards...), "run by two shards"},
		} {
			if _, err := engine.MergeShards(bad.shards); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%d shards, a bad merge: %v, want an error saying %q (%s)", n, err, bad.want, rerun)
			}
		}
	}
	other := opt
	other.N = toyN + 1
	a := engine.RunMatrix(toyWorld, engine.MatrixOptions[toyDesign]{Designs: toyDesigns, N: toyN, Parallel: 2, Shard: engine.Shard{I: 0, N: 2}})
	other.Shard = engine.Shard{I: 1, N: 2}
	if _, err := engine.MergeShards([]engine.Matrix[toySched, toyDetail]{a, engine.RunMatrix(toyWorld, other)}); err == nil || !strings.Contains(err.Error(), "another campaign") {
		t.Errorf("shards of two budgets merged: %v, want an error saying another campaign (%s)", err, rerun)
	}
}

func TestParseShard(t *testing.T) {
	for in, want := range map[string]engine.Shard{"0/1": {0, 1}, "2/4": {2, 4}} {
		if got, err := engine.ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "1", "4/4", "-1/4", "1/0", "a/b", "1/2/3"} {
		if _, err := engine.ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}
