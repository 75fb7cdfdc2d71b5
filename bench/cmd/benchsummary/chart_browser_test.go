package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/internal/testkit/browser"
)

// Each committed chart opens in headless chromium, offline: no console
// message, every line and point in the DOM, and a screenshot of the
// chart's size with the legend's colours in it.
func TestChartsLoadInABrowser(t *testing.T) {
	chrome := browser.Find(t)
	dir := filepath.Dir(summaryPath)
	shots := os.Getenv("ONCEPROOF_HTML_SHOTS") // keep the screenshots there (for a reviewer), if set
	for _, c := range allCharts(t) {
		t.Run("chart="+c.file, func(t *testing.T) {
			shot := filepath.Join(t.TempDir(), "shot.png")
			if shots != "" {
				shot = filepath.Join(shots, strings.TrimSuffix(c.file, ".svg")+".png")
			}
			repro := "reproduce: ONCEPROOF_HTML_SHOTS=/tmp/shots go test -count=1 -run 'TestChartsLoadInABrowser/chart=" + c.file + "' ./bench/cmd/benchsummary, then open " + shot
			if _, err := os.Stat(filepath.Join(dir, c.file)); err != nil {
				t.Fatalf("%v (go test ./bench/cmd/benchsummary -update)", err)
			}
			dom, logs := browser.Load(t, chrome, filepath.Join(dir, c.file), shot, chartW, chartH)
			if m := browser.ConsoleMessages(logs); m != "" {
				t.Errorf("%s: console messages:\n%s\n%s", c.file, m, repro)
			}
			points := 0
			for _, l := range c.lines {
				for _, p := range l.pts {
					if p.ok {
						points++
					}
				}
			}
			if n := strings.Count(dom, "<circle"); n != points {
				t.Errorf("%s: the DOM has %d points, want %d; %s", c.file, n, points, repro)
			}
			if n := strings.Count(dom, "<polyline"); n != len(c.lines) {
				t.Errorf("%s: the DOM has %d lines, want %d; %s", c.file, n, len(c.lines), repro)
			}
			// One colour a line plus the background, the grid and the
			// text: a chart of 6 lines shows at least 8.
			browser.CheckShot(t, shot, repro, chartW, chartH, min(8, len(c.lines)+2))
		})
	}
}
