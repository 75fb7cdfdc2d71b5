package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/internal/testkit/browser"
)

// The browser test's window: the screenshot must come back this size.
const shotW, shotH = 1280, 900

// A page to load: the file, how many event marks and heat-map cells the
// page's script must have found (data-ready), and markup the DOM must
// hold after it ran.
type htmlPage struct {
	kind, file string
	marks      int
	want       []string
}

// TestHTMLReportsLoadInABrowser loads each kind of HTML page the matrix
// writes (the heat map, a settlement counterexample, a loot one) in
// headless chromium, offline (every host name resolves to nothing): no
// console message and no uncaught error, the script ran to its end over
// every cell or event, the DOM holds the expected marks, and the
// screenshot is a PNG of the window's size that is not blank. The loot
// heat map is the same template as the settlement one, so it is not
// loaded again: each launch costs seconds.
func TestHTMLReportsLoadInABrowser(t *testing.T) {
	chrome := browser.Find(t)
	reg := registry()
	dir := t.TempDir()
	shots := os.Getenv("ONCEPROOF_HTML_SHOTS") // keep the screenshots there (for a reviewer), if set
	var pages []htmlPage

	settle := settleSubject(reg.settle)
	sm := smallMatrix(t, settle, []string{"ref", "window-only"}, "crash")
	pages = append(pages, writePages(t, settle, sm, filepath.Join(dir, "settle"), true)...)
	loot := lootSubject(reg.loot)
	lm := smallMatrix(t, loot, []string{"loot-ref", "lock-only"}, "lock-expiry")
	pages = append(pages, writePages(t, loot, lm, filepath.Join(dir, "loot"), false)...)

	for _, p := range pages {
		t.Run("page="+p.kind, func(t *testing.T) {
			shot := filepath.Join(dir, p.kind+".png")
			if shots != "" {
				shot = filepath.Join(shots, p.kind+".png")
			}
			repro := fmt.Sprintf("reproduce: ONCEPROOF_HTML_SHOTS=/tmp/shots go test -count=1 -run 'TestHTMLReportsLoadInABrowser/page=%s' ./cmd/onceproof/, then open %s", p.kind, shot)
			dom, logs := browser.Load(t, chrome, p.file, shot, shotW, shotH)
			if m := browser.ConsoleMessages(logs); m != "" {
				t.Errorf("%s: console messages:\n%s\n%s", p.file, m, repro)
			}
			if strings.Contains(dom, `data-errors=`) {
				t.Errorf("%s: the page counted uncaught errors (data-errors in <html>); %s", p.file, repro)
			}
			ready := regexp.MustCompile(`<html[^>]*data-ready="(\d+)"`).FindStringSubmatch(dom)
			if ready == nil {
				t.Errorf("%s: the page's script did not run to its end (no data-ready on <html>):\n%.600s\n%s", p.file, dom, repro)
			} else if n, _ := strconv.Atoi(ready[1]); n != p.marks {
				t.Errorf("%s: the script found %d cells and events, want %d; %s", p.file, n, p.marks, repro)
			}
			for _, w := range p.want {
				if !strings.Contains(dom, w) {
					t.Errorf("%s: the DOM lacks %q; %s", p.file, w, repro)
				}
			}
			// 8: the page's text, background, links, code background and at
			// least two mark colours, with some slack for anti-aliasing.
			browser.CheckShot(t, shot, repro, shotW, shotH, 8)
		})
	}
}

// smallMatrix runs designs under one family, enough schedules for the
// second design's declared failure to show (the test checks it did).
func smallMatrix[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X], names []string, f engine.Family) engine.Matrix[S, X] {
	t.Helper()
	var ds []D
	for _, n := range names {
		d, err := sub.find(n)
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	// 50: both counterexamples used here show within the first 2 seeds
	// (results/ names their seeds), so 50 leaves room for a generator
	// change and stays a fraction of a second.
	return engine.RunMatrix(sub.world, engine.MatrixOptions[D]{Designs: ds, Families: []engine.Family{f}, N: 50})
}

// writePages writes m's results under dir and returns the pages to load:
// the heat map (if withMatrix) and the first counterexample.
func writePages[D engine.Design, S, X any](t *testing.T, sub subject[D, S, X], m engine.Matrix[S, X], dir string, withMatrix bool) []htmlPage {
	t.Helper()
	if err := writeResults(dir, files(sub, m, filepath.ToSlash(dir), "the browser test")); err != nil {
		t.Fatal(err)
	}
	var cx *engine.Counterexample[S, X]
	cells := 0
	for _, r := range m.Rows {
		for _, c := range r.Cells {
			cells++
			if cx == nil && len(c.Counterexamples) > 0 {
				cx = &c.Counterexamples[0]
			}
		}
	}
	if cx == nil {
		t.Fatalf("%s: no counterexample in %d cells of %d schedules: a declared failure did not show, so there is no timeline page to load (run `onceproof matrix -subject %s` to see the cells)", sub.name, cells, m.N, sub.name)
	}
	var out []htmlPage
	if withMatrix {
		out = append(out, htmlPage{kind: "matrix", file: filepath.Join(dir, "matrix.html"), marks: cells,
			want: []string{`<td class="cell declared"`, `href="counterexamples/` + cx.Name + `.html"`, `<td class="cell holds"`}})
	}
	v, _ := cx.Report.Verdict(cx.Report.Failed()[0])
	out = append(out, htmlPage{kind: sub.name + "-counterexample", file: filepath.Join(dir, "counterexamples", cx.Name+".html"), marks: len(cx.History.Events),
		want: []string{`class="ev k-arrive`, fmt.Sprintf(`viol" data-seq="%d"`, lastEvent(v.Anomalies[0].Events)), `<li data-events=`}})
	return out
}

func lastEvent(seqs []int) int {
	last := -1
	for _, s := range seqs {
		last = max(last, s)
	}
	return last
}
