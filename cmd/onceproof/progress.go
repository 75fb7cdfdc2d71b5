package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// progress prints a matrix's progress on stderr: on a terminal one line
// rewritten in place (at most 5 times a second), elsewhere (a CI log) a
// plain line every 10 s, so a log of a long run shows it moving without
// a line per cell. Nothing for a run shorter than a second. The wall
// clock is read here, at the edge, never by the code under test.
type progress struct {
	w        io.Writer
	terminal bool
	start    time.Time
	last     time.Time
	store    storeRows // -store's design, whose runs the line counts; nil: none
	shown    bool      // a terminal line is up and wants its newline
}

func newProgress(w io.Writer, store storeRows) *progress {
	f, ok := w.(*os.File)
	terminal := false
	if ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			terminal = true
		}
	}
	return &progress{w: w, terminal: terminal, start: time.Now(), store: store}
}

// update is engine.MatrixOptions.Progress (called under the matrix's lock).
func (p *progress) update(pr engine.MatrixProgress) {
	now := time.Now()
	every := 10 * time.Second
	if p.terminal {
		every = 200 * time.Millisecond
	}
	done := pr.CellsDone == pr.Cells
	if now.Sub(p.start) < time.Second || (now.Sub(p.last) < every && !done) {
		return
	}
	p.last = now
	line := progressLine(pr, now.Sub(p.start))
	if p.store != nil {
		line += fmt.Sprintf(", %d runs on %s", p.store.Runs(), p.store.Name())
	}
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K"+line)
		p.shown = true
		if done {
			p.end()
		}
		return
	}
	fmt.Fprintln(p.w, line)
}

// end closes a terminal's progress line.
func (p *progress) end() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// progressLine says how far pr is after elapsed: cells and runs done of
// their totals, the rate, the time left at that rate for the runs it can
// count (an exhaustive cell's are counted apart, as they go),
// and the cell last heard of.
func progressLine(pr engine.MatrixProgress, elapsed time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "matrix: %d/%d cells, %d/%d runs", pr.CellsDone, pr.Cells, pr.RunsDone, pr.Runs)
	if pr.Exhaustive > 0 {
		fmt.Fprintf(&b, " + %d in %d exhaustive cells", pr.ExhaustiveRuns, pr.Exhaustive)
	}
	secs := elapsed.Seconds()
	fmt.Fprintf(&b, ", %.1fs", secs)
	if all := pr.RunsDone + pr.ExhaustiveRuns; secs > 0 && all > 0 {
		rate := float64(all) / secs
		fmt.Fprintf(&b, ", %.0f runs/s", rate)
		// The estimate is for the runs it can count, at the rate of all
		// runs so far: the exhaustive cells' are extra.
		if left := pr.Runs - pr.RunsDone; left > 0 && pr.CellsDone < pr.Cells {
			est := time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second)
			if pr.Exhaustive > 0 {
				fmt.Fprintf(&b, ", ~%s left + the exhaustive cells", est)
			} else {
				fmt.Fprintf(&b, ", ~%s left", est)
			}
		}
	}
	if pr.Last != "" && pr.CellsDone < pr.Cells {
		fmt.Fprintf(&b, " (%s)", pr.Last)
	}
	return b.String()
}
