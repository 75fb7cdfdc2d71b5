package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// charts are the summary's figures from t: WindowPut's time per operation
// against the live-set size, and for each live-set size WindowPutParallel's
// throughput against GOMAXPROCS; one line per implementation, ref first.
// A benchmark the file lacks gives no chart.
func (t *table) charts() []chart {
	var out []chart
	lives := t.liveSizes("WindowPut")
	if len(lives) > 0 {
		c := chart{file: "window-put.svg", title: "WindowPut: time per operation, one goroutine",
			xLabel: "live set (entries, log scale)", yLabel: "ns/op (median, 95% interval)", xs: lives, logX: true}
		for _, impl := range t.implsOf("WindowPut") {
			l := chartLine{name: impl}
			for _, live := range lives {
				xs := secPerOp(t.get("WindowPut/live="+live, impl))
				l.pts = append(l.pts, point(xs, 1e9, false))
			}
			c.lines = append(c.lines, l)
		}
		out = append(out, c)
	}
	if len(t.procs) > 1 {
		for _, live := range t.liveSizes("WindowPutParallel") {
			name := "WindowPutParallel/live=" + live
			var cpus []string
			for _, n := range t.procs {
				cpus = append(cpus, strconv.Itoa(n))
			}
			c := chart{file: "window-put-parallel-live-" + live + ".svg",
				title:  fmt.Sprintf("WindowPutParallel, live set %s: throughput against cores", live),
				xLabel: "GOMAXPROCS (b.RunParallel: a goroutine per CPU)", yLabel: "million ops/s (median, 95% interval)", xs: cpus}
			for _, impl := range t.implsOf("WindowPutParallel") {
				l := chartLine{name: impl}
				for _, n := range t.procs {
					l.pts = append(l.pts, point(secPerOp(t.byProcs[name][impl][n]), 1e-6, true))
				}
				c.lines = append(c.lines, l)
			}
			out = append(out, c)
		}
	}
	return out
}

// point summarises samples of seconds per op as scale x the value
// (1e9: ns/op) or, if rate, as scale x ops per second (1e-6: million
// ops/s), whose interval is the reciprocal of the time's, ends swapped.
func point(secs []float64, scale float64, rate bool) chartPoint {
	if len(secs) == 0 {
		return chartPoint{}
	}
	s := summarize(secs)
	if rate {
		return chartPoint{true, summary{scale / s.center, scale / s.hi, scale / s.lo}}
	}
	return chartPoint{true, summary{scale * s.center, scale * s.lo, scale * s.hi}}
}

// liveSizes are the live= values of base's benchmarks, ascending.
func (t *table) liveSizes(base string) []string {
	var out []string
	for _, n := range t.names {
		if v, ok := strings.CutPrefix(n, base+"/live="); ok && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return out
}

// implsOf are the implementations of base's benchmarks, ref first, then
// by name.
func (t *table) implsOf(base string) []string {
	var out []string
	for _, n := range t.names {
		if !strings.HasPrefix(n, base+"/") {
			continue
		}
		for impl := range t.byName[n] {
			if impl != "" && !slices.Contains(out, impl) {
				out = append(out, impl)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == refImpl:
			return -1
		case b == refImpl:
			return 1
		}
		return strings.Compare(a, b)
	})
	return out
}
