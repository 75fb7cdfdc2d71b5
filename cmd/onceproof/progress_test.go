package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The progress line counts cells and runs, the rate and what is left at
// it, the exhaustive cells apart, and the cell last heard of.
func TestProgressLineSaysHowFarAndHowLong(t *testing.T) {
	for _, c := range []struct {
		p    engine.MatrixProgress
		want string
	}{
		{engine.MatrixProgress{Cells: 10, CellsDone: 4, Runs: 2000, RunsDone: 500, Last: "ref under crash"},
			"matrix: 4/10 cells, 500/2000 runs, 5.0s, 100 runs/s, ~15s left (ref under crash)"},
		{engine.MatrixProgress{Cells: 10, CellsDone: 4, Runs: 2000, RunsDone: 300, Exhaustive: 2, ExhaustiveRuns: 200, Last: "ref under small-scope"},
			"matrix: 4/10 cells, 300/2000 runs + 200 in 2 exhaustive cells, 5.0s, 100 runs/s, ~17s left + the exhaustive cells (ref under small-scope)"},
		{engine.MatrixProgress{Cells: 10, CellsDone: 10, Runs: 2000, RunsDone: 2000, Last: "x under y"},
			"matrix: 10/10 cells, 2000/2000 runs, 5.0s, 400 runs/s"},
	} {
		if got := progressLine(c.p, 5*time.Second); got != c.want {
			t.Errorf("progressLine(%+v)\n got %s\nwant %s (go test ./cmd/onceproof -run TestProgressLineSaysHowFarAndHowLong)", c.p, got, c.want)
		}
	}
	// Off a terminal (a buffer): nothing in the first second.
	var b bytes.Buffer
	p := newProgress(&b, nil)
	p.update(engine.MatrixProgress{Cells: 2, CellsDone: 1})
	if b.Len() != 0 || p.terminal {
		t.Errorf("a progress line in the first second, or a buffer taken for a terminal: %q", b.String())
	}
	p.start = p.start.Add(-2 * time.Second)
	p.update(engine.MatrixProgress{Cells: 2, CellsDone: 1, Runs: 10, RunsDone: 5})
	if !strings.HasPrefix(b.String(), "matrix: 1/2 cells, 5/10 runs") || strings.Contains(b.String(), "\r") {
		t.Errorf("a plain line after a second, got %q", b.String())
	}
}
