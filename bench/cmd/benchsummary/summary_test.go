package main

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite results/bench's summaries and charts from its baselines")

const (
	baselinePath     = "../../../results/bench/baseline.txt"
	summaryPath      = "../../../results/bench/summary.md"
	lootBaselinePath = "../../../results/bench/loot-baseline.txt"
	lootSummaryPath  = "../../../results/bench/loot-summary.md"
)

// summaries are the committed baselines, the command that writes each,
// and the summary generated from it: the charts of both are written
// beside their summaries, in results/bench.
var summaries = []struct {
	in, out, measure string
	summarize        func(string) (string, []chart, error)
}{
	{baselinePath, summaryPath, "make bench, then copy results/bench/new.txt to results/bench/baseline.txt", summarizeFile},
	{lootBaselinePath, lootSummaryPath, "make bench-loot", lootSummarizeFile},
}

// allCharts are the charts of every committed baseline.
func allCharts(t *testing.T) []chart {
	var out []chart
	for _, s := range summaries {
		_, charts, err := s.summarize(s.in)
		if err != nil {
			t.Fatalf("%v (%s)", err, s.measure)
		}
		out = append(out, charts...)
	}
	return out
}

// TestSummaryIsUpToDate fails when a committed summary (the window's or
// the loot one) or one of their charts is not what its committed baseline
// gives, or a chart file is there that no summary shows.
func TestSummaryIsUpToDate(t *testing.T) {
	const regen = "regenerate it: go test ./bench/cmd/benchsummary -update (or make bench-summary)"
	want := map[string]string{}
	for _, s := range summaries {
		md, charts, err := s.summarize(s.in)
		if err != nil {
			t.Fatalf("%v (%s)", err, s.measure)
		}
		if *update {
			if err := writeSummary(s.out, md, charts); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want[filepath.Base(s.out)] = md
		for _, c := range charts {
			if _, dup := want[c.file]; dup {
				t.Errorf("two charts are written to results/bench/%s", c.file)
			}
			want[c.file] = c.svg()
		}
	}
	if *update {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(want)) {
		body := want[name]
		got, err := os.ReadFile(filepath.Join(filepath.Dir(summaryPath), name))
		if err != nil {
			t.Errorf("results/bench/%s: %v; %s", name, err, regen)
		} else if string(got) != body {
			t.Errorf("results/bench/%s is stale; %s", name, regen)
		}
	}
	svgs, _ := filepath.Glob(filepath.Join(filepath.Dir(summaryPath), "*.svg"))
	for _, f := range svgs {
		if _, ok := want[filepath.Base(f)]; !ok {
			t.Errorf("results/bench/%s is no chart of a summary: remove it (git rm)", filepath.Base(f))
		}
	}
}

// synthetic is a benchmark file with known medians: ref 10ns, otter 150ns
// (ratio 15), ref parallel 5ns at 2 CPUs (speedup 2 over one goroutine) and
// 9ns at 1 CPU (no -N suffix: scaling 1.8x); six runs each so the 95%
// interval of a median exists.
const synthetic = `goos: linux
goarch: amd64
pkg: github.com/onceproof/onceproof/bench
cpu: Test CPU
BenchmarkWindowPut/impl=ref/live=131072-2 100 10 ns/op 30 bytes/live-entry 1 catch-rate 0 B/op 0 allocs/op
BenchmarkWindowPut/impl=ref/live=131072-2 100 10 ns/op 30 bytes/live-entry 1 catch-rate 0 B/op 0 allocs/op
BenchmarkWindowPut/impl=ref/live=131072-2 100 10 ns/op 30 bytes/live-entry 1 catch-rate 0 B/op 0 allocs/op
BenchmarkWindowPut/impl=ref/live=131072-2 100 10 ns/op 30 bytes/live-entry 1 catch-rate 0 B/op 0 allocs/op
BenchmarkWindowPut/impl=ref/live=131072-2 100 10 ns/op 30 bytes/live-entry 1 catch-rate 0 B/op 0 allocs/op
BenchmarkWindowPut/impl=ref/live=131072-2 100 10 ns/op 30 bytes/live-entry 1 catch-rate 0 B/op 0 allocs/op
BenchmarkWindowPut/impl=otter/live=131072-2 100 150 ns/op 86 bytes/live-entry 1 catch-rate 0 B/op 1 allocs/op
BenchmarkWindowPut/impl=otter/live=131072-2 100 150 ns/op 86 bytes/live-entry 1 catch-rate 0 B/op 1 allocs/op
BenchmarkWindowPut/impl=otter/live=131072-2 100 150 ns/op 86 bytes/live-entry 1 catch-rate 0 B/op 1 allocs/op
BenchmarkWindowPut/impl=otter/live=131072-2 100 150 ns/op 86 bytes/live-entry 1 catch-rate 0 B/op 1 allocs/op
BenchmarkWindowPut/impl=otter/live=131072-2 100 150 ns/op 86 bytes/live-entry 1 catch-rate 0 B/op 1 allocs/op
BenchmarkWindowPut/impl=otter/live=131072-2 100 150 ns/op 86 bytes/live-entry 1 catch-rate 0 B/op 1 allocs/op
BenchmarkWindowPut/impl=otter/live=1024-2 100 150 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072-2 100 5 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072-2 100 5 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072-2 100 5 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072-2 100 5 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072-2 100 5 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072-2 100 5 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072 100 9 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072 100 9 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072 100 9 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072 100 9 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072 100 9 ns/op
BenchmarkWindowPutParallel/impl=ref/live=131072 100 9 ns/op
BenchmarkStreamNext-2 100 4 ns/op
BenchmarkDesign/design=ref/schedule=clean-2 100 7000 ns/op 700 ns/attempt 300 allocs/op
`

func TestSummaryRatiosOnKnownInput(t *testing.T) {
	tb, err := read(strings.NewReader(synthetic), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	md := tb.markdown("synthetic")
	for _, want := range []string{
		"| WindowPut/live=131072 | 10.0 | otter | 15.00x [15.00, 15.00] |",
		"| ref >= 15x faster than otter | 15.00x [15.00, 15.00] | met |",
		"| live=131072 | ref | 2.00x [2.00, 2.00] |",
		"| <= 32 bytes per live entry | 30.0 | met |",
		"- cpu: Test CPU",
		"takes 4.0 ns/op",
		"| Design/design=ref/schedule=clean | 700 | 7000 | 300 |",
		"- gomaxprocs: 1, 2",
		"| WindowPutParallel/live=131072 | ref | 1.80x [1.80, 1.80] |",
		"| parallel throughput at 2 CPUs >= 1.8x at 1 CPU | 1.80x [1.80, 1.80] | met |",
		"| one goroutine <= 40 ns/op (on this machine) | 10.0 | met |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q (go test -run=TestSummaryRatiosOnKnownInput ./bench/cmd/benchsummary/); got:\n%s", want, md)
		}
	}
	// otter at live=1024 has no ref counterpart: it is listed among the
	// metrics but must not be compared.
	if n := strings.Count(md, "WindowPut/live=1024 |"); n != 1 {
		t.Errorf("a benchmark without a ref run was compared:\n%s", md)
	}
}

// The charts of a file with known medians: one line per implementation,
// ref first, each point's tooltip its median and interval, and the SVG
// well-formed XML.
func TestChartsOnKnownInput(t *testing.T) {
	tab, err := read(strings.NewReader(synthetic), "synthetic")
	if err != nil {
		t.Fatal(err)
	}
	charts := tab.charts()
	if len(charts) == 0 || charts[0].file != "window-put.svg" {
		t.Fatalf("charts of the synthetic file: %+v, want window-put.svg first", charts)
	}
	c := charts[0]
	if len(c.lines) != 2 || c.lines[0].name != "ref" || c.lines[1].name != "otter" {
		t.Fatalf("window-put lines: %+v, want ref then otter", c.lines)
	}
	svg := c.svg()
	for _, want := range []string{
		`<title>ref 131072: 10.0 [10.0, 10.0]</title>`,
		`<title>otter 131072: 150 [150, 150]</title>`,
		`data-impl="otter"`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("window-put.svg lacks %s:\n%s", want, svg)
		}
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("window-put.svg has %d lines, want 2", n)
	}
	for _, c := range charts {
		wellFormed(t, c, "go test -count=1 -run TestChartsOnKnownInput ./bench/cmd/benchsummary")
	}
}
