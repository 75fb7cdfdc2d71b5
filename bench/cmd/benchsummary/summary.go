package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// confidence is the level of every interval in the summary. With
// benchmath.AssumeNothing a median's 95% interval needs at least 6 samples:
// make bench runs -count=6.
const confidence = 0.95

// refImpl is the implementation every ratio is taken against.
const refImpl = "ref"

// series is one benchmark's samples, by unit.
type series map[string][]float64

// table holds a benchmark file: for each benchmark name without its impl=
// part and GOMAXPROCS suffix ("WindowPut/live=131072"), each impl's series;
// names without an impl= part are stored under impl "". A benchmark run at
// several GOMAXPROCS values (the Parallel ones, with -cpu) has a series per
// value in byProcs; byName holds its series at the largest value (all cores).
type table struct {
	config  map[string]string // goos, goarch, cpu, pkg (first seen)
	byName  map[string]map[string]series
	byProcs map[string]map[string]map[int]series
	procs   []int    // the GOMAXPROCS values seen, ascending
	names   []string // in file order
}

// summarizeFile is the summary of the benchmark file at path: the
// Markdown, and the charts it shows (written beside it).
func summarizeFile(path string) (string, []chart, error) {
	return summarizeWith(path, func(r io.Reader, name string) (summarizer, error) { return read(r, name) })
}

// A summarizer is a benchmark file read: a summary with its charts.
type summarizer interface {
	markdown(source string) string
	charts() []chart
}

// summarizeWith is the summary of the file at path as read reads it.
func summarizeWith(path string, read func(io.Reader, string) (summarizer, error)) (string, []chart, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	t, err := read(f, path)
	if err != nil {
		return "", nil, err
	}
	return t.markdown(filepath.Base(path)), t.charts(), nil
}

func read(r io.Reader, name string) (*table, error) {
	t := &table{config: map[string]string{}, byName: map[string]map[string]series{}, byProcs: map[string]map[string]map[int]series{}}
	br := benchfmt.NewReader(r, name)
	n := 0
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.SyntaxError:
			return nil, rec
		case *benchfmt.Result:
			for _, c := range rec.Config {
				if c.File {
					if _, ok := t.config[c.Key]; !ok {
						t.config[c.Key] = string(c.Value)
					}
				}
			}
			base, parts := rec.Name.Parts()
			key, impl, procs := string(base), "", 1 // no -N suffix: GOMAXPROCS was 1
			for _, p := range parts {
				if p[0] == '-' {
					if v, err := strconv.Atoi(string(p[1:])); err == nil {
						procs = v
					}
					continue
				}
				if v, ok := strings.CutPrefix(string(p), "/impl="); ok {
					impl = v
					continue
				}
				key += string(p)
			}
			if t.byProcs[key] == nil {
				t.byProcs[key] = map[string]map[int]series{}
				t.names = append(t.names, key)
			}
			if t.byProcs[key][impl] == nil {
				t.byProcs[key][impl] = map[int]series{}
			}
			ser := t.byProcs[key][impl][procs]
			if ser == nil {
				ser = series{}
				t.byProcs[key][impl][procs] = ser
			}
			for _, v := range rec.Values {
				ser[v.Unit] = append(ser[v.Unit], v.Value)
			}
			if !slices.Contains(t.procs, procs) {
				t.procs = append(t.procs, procs)
			}
			n++
		}
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", name)
	}
	slices.Sort(t.procs)
	for key, impls := range t.byProcs {
		t.byName[key] = map[string]series{}
		for impl, byP := range impls {
			t.byName[key][impl] = byP[slices.Max(slices.Collect(maps.Keys(byP)))]
		}
	}
	return t, nil
}

// summary is a median and its confidence interval.
type summary struct{ center, lo, hi float64 }

func summarize(xs []float64) summary {
	s := benchmath.AssumeNothing.Summary(benchmath.NewSample(slices.Clone(xs), &benchmath.DefaultThresholds), confidence)
	return summary{s.Center, s.Lo, s.Hi}
}

// ratio is num/den of two medians, with the interval
// [num.lo/den.hi, num.hi/den.lo]. If each median's interval has coverage 95%,
// both hold together with probability >= 90%, and then the true ratio lies in
// this interval: a conservative interval, honest with 6 samples, where a
// bootstrap of the ratio would claim more than the data supports.
func ratio(num, den summary) summary {
	return summary{num.center / den.center, num.lo / den.hi, num.hi / den.lo}
}

func (s summary) ratioString() string {
	if math.IsInf(s.lo, 0) || math.IsInf(s.hi, 0) || s.lo <= 0 || math.IsNaN(s.lo) {
		return fmt.Sprintf("%.2fx (too few samples for an interval)", s.center)
	}
	return fmt.Sprintf("%.2fx [%.2f, %.2f]", s.center, s.lo, s.hi)
}

// secPerOp returns the time series of a benchmark: benchfmt reports ns/op as
// sec/op.
func secPerOp(s series) []float64 { return s["sec/op"] }

func (t *table) get(name, impl string) series {
	if m := t.byName[name]; m != nil {
		return m[impl]
	}
	return nil
}

// impls returns the impls of name other than ref, in a fixed order.
func (t *table) impls(name string) []string {
	var out []string
	for impl := range t.byName[name] {
		if impl != refImpl {
			out = append(out, impl)
		}
	}
	slices.Sort(out)
	return out
}

// withImpl lists the benchmark names that have a ref series, grouped by base.
func (t *table) refNames(base string) []string {
	var out []string
	for _, n := range t.names {
		if strings.HasPrefix(n, base+"/") && t.get(n, refImpl) != nil {
			out = append(out, n)
		}
	}
	return out
}

func (t *table) markdown(source string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Benchmark summary\n\n")
	p("Generated by `go run ./bench/cmd/benchsummary` from `%s`; do not edit (make bench-summary rewrites it).\n\n", source)
	for _, k := range []string{"goos", "goarch", "cpu", "pkg"} {
		if v, ok := t.config[k]; ok {
			p("- %s: %s\n", k, v)
		}
	}
	var procs []string
	for _, n := range t.procs {
		procs = append(procs, strconv.Itoa(n))
	}
	p("- gomaxprocs: %s\n", strings.Join(procs, ", "))
	p("\nEvery figure is a median over the runs in the file; intervals are %.0f%% intervals of the medians\n", confidence*100)
	p("(benchmath, assuming nothing about the distribution). A ratio X/ref is shown as\n")
	p("`median [lo, hi]` with lo = X.lo/ref.hi and hi = X.hi/ref.lo (conservative). Only benchmarks present\n")
	p("for both implementations are compared. Ratios > 1 mean ref is faster.\n\n")
	for _, c := range t.charts() {
		p("![%s](%s)\n\n", c.title, c.file)
	}

	for _, base := range []string{"WindowPut", "WindowPutParallel"} {
		names := t.refNames(base)
		if len(names) == 0 {
			continue
		}
		p("## %s: time per operation, X / ref\n\n", base)
		p("| benchmark | ref ns/op | X | X / ref |\n|---|---:|---|---:|\n")
		for _, n := range names {
			ref := summarize(secPerOp(t.get(n, refImpl)))
			for _, impl := range t.impls(n) {
				xs := secPerOp(t.get(n, impl))
				if len(xs) == 0 {
					continue
				}
				p("| %s | %.1f | %s | %s |\n", n, ref.center*1e9, impl, ratio(summarize(xs), ref).ratioString())
			}
		}
		p("\n")
	}

	p("## Other metrics (medians)\n\n")
	p("| benchmark | impl | ns/op | allocs/op | bytes/live-entry | catch-rate |\n|---|---|---:|---:|---:|---:|\n")
	for _, n := range t.names {
		if !strings.HasPrefix(n, "WindowPut") {
			continue
		}
		for _, impl := range append([]string{refImpl}, t.impls(n)...) {
			s := t.get(n, impl)
			if s == nil {
				continue
			}
			p("| %s | %s | %s | %s | %s | %s |\n", n, impl, med(s["sec/op"], 1e9, "%.1f"), med(s["allocs/op"], 1, "%.0f"), med(s["bytes/live-entry"], 1, "%.1f"), med(s["catch-rate"], 1, "%.4f"))
		}
	}
	p("\n")

	p("## Parallel speedup: WindowPut ns/op / WindowPutParallel ns/op\n\n")
	p("| benchmark | impl | speedup |\n|---|---|---:|\n")
	for _, n := range t.names {
		rest, ok := strings.CutPrefix(n, "WindowPut/")
		if !ok {
			continue
		}
		for _, impl := range append([]string{refImpl}, t.impls(n)...) {
			ser, par := secPerOp(t.get(n, impl)), secPerOp(t.get("WindowPutParallel/"+rest, impl))
			if len(ser) == 0 || len(par) == 0 {
				continue
			}
			p("| %s | %s | %s |\n", rest, impl, ratio(summarize(ser), summarize(par)).ratioString())
		}
	}
	p("\n")

	t.scaling(p)

	p("## Settle on a window hit\n\n")
	settle := secPerOp(t.get("Settle/path=windowdup", ""))
	p("| comparison | ratio |\n|---|---:|\n")
	for _, c := range []struct{ label, name, impl string }{
		{"Settle/path=windowdup / WindowPut/impl=ref/live=131072", "WindowPut/live=131072", refImpl},
		{"Settle/path=windowdup / WindowLookup", "WindowLookup", ""},
	} {
		if den := secPerOp(t.get(c.name, c.impl)); len(settle) > 0 && len(den) > 0 {
			p("| %s | %s |\n", c.label, ratio(summarize(settle), summarize(den)).ratioString())
		}
	}
	for _, path := range []string{"fresh", "windowdup", "storedup"} {
		if s := secPerOp(t.get("Settle/path="+path, "")); len(s) > 0 {
			p("| Settle/path=%s ns/op | %.1f |\n", path, summarize(s).center*1e9)
		}
	}
	p("\n")
	t.harness(p)
	t.designs(p)
	t.targets(p)
	return b.String()
}

// scaling lists, for every benchmark run at several GOMAXPROCS values (the
// Parallel ones), each implementation's throughput at N CPUs over its
// throughput at 1 CPU: ns/op at 1 / ns/op at N, since b.RunParallel's ns/op is
// wall time per operation of all goroutines together. 2.00x at 2 CPUs is
// linear scaling.
func (t *table) scaling(p func(string, ...any)) {
	var rows []string
	for _, n := range t.names {
		for _, byP := range t.byProcs[n] {
			if len(byP) > 1 && byP[1] != nil {
				rows = append(rows, n)
				break
			}
		}
	}
	if len(rows) == 0 {
		return
	}
	more := t.procs[1:]
	p("## Scaling: throughput at N CPUs / throughput at 1 CPU\n\n")
	p("ns/op at GOMAXPROCS=1 over ns/op at GOMAXPROCS=N (b.RunParallel: one goroutine per CPU, ns/op is wall time per operation). Linear scaling is Nx.\n\n")
	p("| benchmark | impl |")
	for _, n := range more {
		p(" %d CPUs |", n)
	}
	p("\n|---|---|%s\n", strings.Repeat("---:|", len(more)))
	for _, n := range rows {
		impls := append([]string{}, t.impls(n)...)
		if _, ok := t.byProcs[n][refImpl]; ok {
			impls = append([]string{refImpl}, impls...)
		}
		if _, ok := t.byProcs[n][""]; ok {
			impls = []string{""}
		}
		for _, impl := range impls {
			byP := t.byProcs[n][impl]
			one := secPerOp(byP[1])
			if len(one) == 0 {
				continue
			}
			label := impl
			if label == "" {
				label = "-"
			}
			p("| %s | %s |", n, label)
			for _, procs := range more {
				if xs := secPerOp(byP[procs]); len(xs) > 0 {
					p(" %s |", ratio(summarize(one), summarize(xs)).ratioString())
				} else {
					p(" - |")
				}
			}
			p("\n")
		}
	}
	p("\n")
}

// harness states the cost of the benchmark loop without a window
// (BenchmarkStreamNext), which every WindowPut figure includes.
func (t *table) harness(p func(string, ...any)) {
	s := secPerOp(t.get("StreamNext", ""))
	if len(s) == 0 {
		return
	}
	p("## Harness\n\n")
	p("BenchmarkStreamNext (the WindowPut loop with no window: the workload generator and the catch-rate count) takes %.1f ns/op, included in every WindowPut ns/op above.\n", summarize(s).center*1e9)
	p("Ratios to ref are of those totals, so they understate how much faster ref's Put itself is.\n\n")
}

// designs lists BenchmarkDesign: each design of impls on each standard
// schedule, per delivery attempt (benchfmt reads ns/attempt as sec/attempt).
func (t *table) designs(p func(string, ...any)) {
	var rows []string
	for _, n := range t.names {
		if strings.HasPrefix(n, "Design/") && t.get(n, "") != nil {
			rows = append(rows, n)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("## Designs on the standard schedules (medians)\n\n")
	p("| benchmark | ns/attempt | ns/op (one schedule) | allocs/op |\n|---|---:|---:|---:|\n")
	for _, n := range rows {
		s := t.get(n, "")
		p("| %s | %s | %s | %s |\n", n, med(s["sec/attempt"], 1e9, "%.0f"), med(s["sec/op"], 1e9, "%.0f"), med(s["allocs/op"], 1, "%.0f"))
	}
	p("\n")
}

func med(xs []float64, scale float64, format string) string {
	if len(xs) == 0 {
		return "-"
	}
	return fmt.Sprintf(format, summarize(xs).center*scale)
}

// targets checks the targets on medians (a target is "met" when the
// median meets it; the interval says how sure that is).
func (t *table) targets(p func(string, ...any)) {
	const name = "WindowPut/live=131072"
	ref := t.get(name, refImpl)
	if ref == nil {
		return
	}
	p("## Targets (issue 5, live = 131072, one goroutine)\n\n| target | measured | verdict |\n|---|---|---|\n")
	refT := summarize(secPerOp(ref))
	for _, c := range []struct {
		impl string
		min  float64
	}{{"otter", 15}, {"ristretto", 5}, {"gomap", 3}} {
		if xs := secPerOp(t.get(name, c.impl)); len(xs) > 0 {
			r := ratio(summarize(xs), refT)
			p("| ref >= %.0fx faster than %s | %s | %s |\n", c.min, c.impl, r.ratioString(), verdict(r.center >= c.min))
		}
	}
	if a := ref["allocs/op"]; len(a) > 0 {
		m := summarize(a).center
		p("| 0 allocs/op | %.0f | %s |\n", m, verdict(m == 0))
	}
	if a := ref["bytes/live-entry"]; len(a) > 0 {
		m := summarize(a).center
		p("| <= 32 bytes per live entry | %.1f | %s |\n", m, verdict(m <= 32))
	}
	if a := ref["catch-rate"]; len(a) > 0 {
		m := slices.Min(a)
		p("| catch rate 100%% | %.4f (lowest run) | %s |\n", m, verdict(m == 1))
	}
	if par := secPerOp(t.get("WindowPutParallel/live=131072", refImpl)); len(par) > 0 {
		r := ratio(refT, summarize(par))
		p("| parallel on all cores >= 1.6x one goroutine | %s | %s |\n", r.ratioString(), verdict(r.center >= 1.6))
	}
	if byP := t.byProcs["WindowPutParallel/live=131072"][refImpl]; len(byP[1]["sec/op"]) > 0 && len(byP[2]["sec/op"]) > 0 {
		r := ratio(summarize(secPerOp(byP[1])), summarize(secPerOp(byP[2])))
		p("| parallel throughput at 2 CPUs >= 1.8x at 1 CPU | %s | %s |\n", r.ratioString(), verdict(r.center >= 1.8))
	}
	p("| one goroutine <= 40 ns/op (on this machine) | %.1f | %s |\n", refT.center*1e9, verdict(refT.center*1e9 <= 40))
	if s := secPerOp(t.get("Settle/path=windowdup", "")); len(s) > 0 {
		r := ratio(summarize(s), refT)
		p("| Settle on a window hit <= 1.3x Window.Put | %s | %s |\n", r.ratioString(), verdict(r.center <= 1.3))
	}
	p("\n")
}

// verdict is how the targets tables state a target: met or MISSED.
func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}
