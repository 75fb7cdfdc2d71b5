package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite results/bench/summary.md from results/bench/baseline.txt")

const (
	baselinePath = "../../../results/bench/baseline.txt"
	summaryPath  = "../../../results/bench/summary.md"
)

// TestSummaryIsUpToDate fails when the committed summary or one of its
// charts is not what the committed baseline gives, or a chart file is
// there that the summary no longer shows.
func TestSummaryIsUpToDate(t *testing.T) {
	md, charts, err := summarizeFile(baselinePath)
	if err != nil {
		t.Fatalf("%v (make bench, then copy results/bench/new.txt to results/bench/baseline.txt)", err)
	}
	if *update {
		if err := writeSummary(summaryPath, md, charts); err != nil {
			t.Fatal(err)
		}
		return
	}
	const regen = "regenerate it: go test ./bench/cmd/benchsummary -update (or make bench-summary)"
	want := map[string]string{filepath.Base(summaryPath): md}
	for _, c := range charts {
		want[c.file] = c.svg()
	}
	for name, body := range want {
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
			t.Errorf("results/bench/%s is no chart of the summary: remove it (git rm)", filepath.Base(f))
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
