package main

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchfmt"
)

// The loot section summarises make bench-loot's file: the loot benchmarks
// of several packages (ref/loot/postgres, ref/loot/mysql, cmd/lootd), each
// sub-benchmark named side=... (impl= or target=) and conc=..., reporting
// a rate (claims/s, settles/s) and its costs per op (round trips, CPU).
// Its rows are keyed by package as well as name: two stores have a
// BenchmarkLootSettleDeliver, and their numbers must never pool.

// lootBaselines are the sides every other side of a row is compared
// with, first present wins: the source document's design (impl=doc), or
// for lootd's HTTP benchmark the same Service called in process
// (target=inproc).
var lootBaselines = []string{"doc", "inproc"}

// lootStores names a package's store for headings; a package not listed
// is named by its import path's last element.
var lootStores = map[string]string{
	"ref/loot/postgres": "PostgreSQL",
	"ref/loot/mysql":    "MariaDB",
	"cmd/lootd":         "lootd over HTTP",
}

// lootRow is one benchmark of one package over its sides and concurrency
// levels: "LootClaim" of ref/loot/postgres, "Loot/op=claim" of
// ref/loot/mysql.
type lootRow struct {
	pkg, bench string
	rate       string   // the unit ending in /s: claims/s
	sides      []string // in file order: ref, ref-batched, doc
	concs      []int    // ascending
	samples    map[string]map[int]series
}

type lootTable struct {
	config map[string]string // goos, goarch, cpu: first seen
	iters  []int             // the b.N values seen, ascending
	pkgs   []string          // in file order
	rows   []*lootRow        // in file order
}

// lootSummarizeFile is the loot summary of the benchmark file at path
// and the charts it shows.
func lootSummarizeFile(path string) (string, []chart, error) {
	return summarizeWith(path, func(r io.Reader, name string) (summarizer, error) { return readLoot(r, name) })
}

func readLoot(r io.Reader, name string) (*lootTable, error) {
	t := &lootTable{config: map[string]string{}}
	byKey := map[string]*lootRow{}
	br := benchfmt.NewReader(r, name)
	n := 0
	for br.Scan() {
		rec, ok := br.Result().(*benchfmt.Result)
		if !ok {
			if err, ok := br.Result().(*benchfmt.SyntaxError); ok {
				return nil, err
			}
			continue
		}
		for _, k := range []string{"goos", "goarch", "cpu"} {
			if v := strings.TrimSpace(rec.GetConfig(k)); v != "" && t.config[k] == "" {
				t.config[k] = v
			}
		}
		if !slices.Contains(t.iters, rec.Iters) {
			t.iters = append(t.iters, rec.Iters)
			slices.Sort(t.iters)
		}
		pkg := rec.GetConfig("pkg")
		base, parts := rec.Name.Parts()
		bench, side, conc := string(base), "", 0
		for _, p := range parts {
			s := string(p)
			if s[0] == '-' { // GOMAXPROCS: the same for every row of a run
				continue
			}
			k, v, _ := strings.Cut(strings.TrimPrefix(s, "/"), "=")
			switch k {
			case "impl", "target":
				side = v
			case "conc":
				c, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: conc=%q is not a number", name, rec.Name.Full(), v)
				}
				conc = c
			default:
				bench += s
			}
		}
		if side == "" || conc == 0 {
			return nil, fmt.Errorf("%s: %s has no impl= or target= and conc= part: not a loot benchmark", name, rec.Name.Full())
		}
		key := pkg + " " + bench
		row := byKey[key]
		if row == nil {
			row = &lootRow{pkg: pkg, bench: bench, samples: map[string]map[int]series{}}
			byKey[key] = row
			t.rows = append(t.rows, row)
			if !slices.Contains(t.pkgs, pkg) {
				t.pkgs = append(t.pkgs, pkg)
			}
		}
		if row.samples[side] == nil {
			row.samples[side] = map[int]series{}
			row.sides = append(row.sides, side)
		}
		if !slices.Contains(row.concs, conc) {
			row.concs = append(row.concs, conc)
			slices.Sort(row.concs)
		}
		ser := row.samples[side][conc]
		if ser == nil {
			ser = series{}
			row.samples[side][conc] = ser
		}
		for _, v := range rec.Values {
			ser[v.Unit] = append(ser[v.Unit], v.Value)
			if strings.HasSuffix(v.Unit, "/s") {
				if row.rate != "" && row.rate != v.Unit {
					return nil, fmt.Errorf("%s: %s reports %s, its row %s", name, rec.Name.Full(), v.Unit, row.rate)
				}
				row.rate = v.Unit
			}
		}
		n++
	}
	if err := br.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%s: no benchmark results", name)
	}
	for _, row := range t.rows {
		if row.rate == "" {
			return nil, fmt.Errorf("%s: %s %s reports no rate (a unit ending in /s)", name, row.pkg, row.bench)
		}
	}
	return t, nil
}

// store is the heading name of pkg; slug its file-name part.
func store(pkg string) string {
	for suffix, name := range lootStores {
		if strings.HasSuffix(pkg, "/"+suffix) {
			return name
		}
	}
	return path.Base(pkg)
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// baseline is the side row's other sides are compared with, "" if none.
func (row *lootRow) baseline() string {
	for _, s := range lootBaselines {
		if row.samples[s] != nil {
			return s
		}
	}
	return ""
}

func (row *lootRow) rates(side string, conc int) []float64 {
	return row.samples[side][conc][row.rate]
}

// lootRatio is side's rate over the baseline's. When both have one sample
// per run of make bench-loot (the usual file: BENCHCOUNT processes, each
// running every sub-benchmark once), run i's ratio is side_i / base_i,
// both measured by one process minutes apart, and the summary is the
// median of those ratios with its benchmath interval: load that slows a
// whole run cancels out of its ratio. With unequal counts there is no
// pairing, and the interval is the conservative one of ratio.
func lootRatio(side, base []float64) (s summary, paired bool) {
	if len(side) == len(base) {
		rs := make([]float64, len(side))
		for i := range side {
			rs[i] = side[i] / base[i]
		}
		return summarize(rs), true
	}
	return ratio(summarize(side), summarize(base)), false
}

func (t *lootTable) markdown(source string) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Loot benchmark summary\n\n")
	p("Generated by `go run ./bench/cmd/benchsummary` from `%s` (make bench-loot writes it); do not edit (make bench-summary rewrites it).\n\n", source)
	for _, k := range []string{"goos", "goarch", "cpu"} {
		if v, ok := t.config[k]; ok {
			p("- %s: %s\n", k, v)
		}
	}
	p("- packages: %s\n", strings.Join(t.pkgs, ", "))
	p("\nEach benchmark runs its implementations (impl=, or target= for lootd) at each concurrency (conc=: callers at once).\n")
	p("Rates are medians over the runs in the file with %.0f%% intervals of the median (benchmath, assuming nothing\n", confidence*100)
	p("about the distribution). A ratio X / %s is X's rate over %s's (> 1: X does more per second; lootd's\n", lootBaselines[0], lootBaselines[0])
	p("are over %s, the Service called in process). When each run of the file holds one sample of both, the ratio\n", lootBaselines[1])
	p("is the median of the runs' ratios X_i / base_i (two sides of one process, so load that slows a whole run\n")
	p("cancels) with its %.0f%% interval; a ratio marked `unpaired` has the conservative interval\n", confidence*100)
	p("[X.lo / base.hi, X.hi / base.lo] of the two medians' intervals instead.\n\n")
	p("Costs are medians per op: round trips as the benchmarks count them (a batch or a pipeline is one; under\n")
	p("coalescing several ops share one, so fewer than one per op) and CPU in microseconds of the process named.\n")
	p("The database's (pg-cpu, db-cpu) and lootd's are read from /proc in the kernel's 10 ms ticks, so they are\n")
	p("accurate to 10 ms / b.N")
	if len(t.iters) == 1 {
		p(" (b.N = %d here: %s us)", t.iters[0], strconv.FormatFloat(1e4/float64(t.iters[0]), 'g', 3, 64))
	}
	p("; the benchmark process's (go-cpu, bench-cpu: getrusage) and Redis's (INFO cpu) are finer.\n\n")
	for _, c := range t.charts() {
		p("![%s](%s)\n\n", c.title, c.file)
	}
	for _, pkg := range t.pkgs {
		p("## %s: `%s`\n\n", store(pkg), pkg)
		p("| benchmark | conc | X | X rate | base | base rate | X / base |\n|---|---:|---|---:|---|---:|---:|\n")
		for _, row := range t.rows {
			base := row.baseline()
			if row.pkg != pkg || base == "" {
				continue
			}
			for _, conc := range row.concs {
				bs := row.rates(base, conc)
				for _, side := range row.sides {
					xs := row.rates(side, conc)
					if side == base || len(xs) == 0 || len(bs) == 0 {
						continue
					}
					r, paired := lootRatio(xs, bs)
					cell := r.ratioString()
					if !paired {
						cell += " unpaired"
					}
					p("| %s | %d | %s | %s %s | %s | %s | %s |\n", row.bench, conc, side, number(xs), row.rate, base, number(bs), cell)
				}
			}
		}
		p("\n")
		t.costs(p, pkg)
	}
	t.targets(p)
	return b.String()
}

// targets checks the reference's targets: on each store, the reference (its best
// variant: ref or ref-batched) at or above the document's design (>= 1x) for
// every op at every conc, and >= 2x at the highest conc on some op of some
// store. A target is met when the median ratio meets it; the interval says
// how sure that is.
func (t *lootTable) targets(p func(string, ...any)) {
	type best struct {
		side string
		r    summary
		ok   bool
	}
	var rows []string
	twice := false
	for _, row := range t.rows {
		if row.baseline() != lootBaselines[0] {
			continue // lootd's rows compare HTTP with in process: no target
		}
		top := slices.Max(row.concs)
		for _, conc := range row.concs {
			var b best
			for _, side := range row.sides {
				if !strings.HasPrefix(side, refImpl) || len(row.rates(side, conc)) == 0 || len(row.rates(lootBaselines[0], conc)) == 0 {
					continue
				}
				if r, _ := lootRatio(row.rates(side, conc), row.rates(lootBaselines[0], conc)); !b.ok || r.center > b.r.center {
					b = best{side, r, true}
				}
			}
			if !b.ok {
				continue
			}
			twice = twice || conc == top && b.r.center >= 2
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %s | %s | %s |\n", store(row.pkg), row.bench, conc, b.side, b.r.ratioString(), verdict(b.r.center >= 1)))
		}
	}
	if len(rows) == 0 {
		return
	}
	p("## Targets: ref >= 1x doc everywhere, >= 2x at the highest conc on some store\n\n")
	p("| store | benchmark | conc | best ref | ref / doc | >= 1x |\n|---|---|---:|---|---:|---|\n")
	for _, r := range rows {
		p("%s", r)
	}
	p("\n>= 2x doc at the highest conc on some store and op: %s.\n", verdict(twice))
}

// costs tables, for pkg, every unit its rows report per op (round trips,
// CPU), each side of a conc on adjacent rows so they read side by side.
func (t *lootTable) costs(p func(string, ...any), pkg string) {
	var units []string
	for _, row := range t.rows {
		if row.pkg != pkg {
			continue
		}
		for _, bySide := range row.samples {
			for _, ser := range bySide {
				for u := range ser {
					if strings.HasSuffix(u, "/op") && u != "sec/op" && !slices.Contains(units, u) {
						units = append(units, u)
					}
				}
			}
		}
	}
	slices.Sort(units)
	p("| benchmark | conc | impl | rate |")
	for _, u := range units {
		p(" %s |", u)
	}
	p("\n|---|---:|---|---:|%s\n", strings.Repeat("---:|", len(units)))
	for _, row := range t.rows {
		if row.pkg != pkg {
			continue
		}
		for _, conc := range row.concs {
			for _, side := range row.sides {
				ser := row.samples[side][conc]
				if ser == nil {
					continue
				}
				p("| %s | %d | %s | %s %s |", row.bench, conc, side, number(ser[row.rate]), row.rate)
				for _, u := range units {
					p(" %s |", number(ser[u]))
				}
				p("\n")
			}
		}
	}
	p("\n")
}

// number is a median with the digits it needs: whole above 100 (rates,
// CPU in microseconds), else two decimals (round trips are fractions of
// one when calls coalesce: 0.43).
func number(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	v := summarize(xs).center
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// charts are one chart a row: its rate against conc, a line per side in
// file order (ref first as the benchmarks run it).
func (t *lootTable) charts() []chart {
	var out []chart
	for _, row := range t.rows {
		var xs []string
		for _, c := range row.concs {
			xs = append(xs, strconv.Itoa(c))
		}
		c := chart{
			file:   "loot-" + slug(path.Base(row.pkg)) + "-" + slug(row.bench) + ".svg",
			title:  fmt.Sprintf("%s, %s: %s against concurrency", store(row.pkg), row.bench, row.rate),
			xLabel: "concurrent callers", yLabel: row.rate + " (median, 95% interval)",
			xs: xs, logX: len(xs) > 1,
		}
		if c.logX {
			c.xLabel += " (log scale)"
		}
		for _, side := range row.sides {
			l := chartLine{name: side}
			for _, conc := range row.concs {
				if rs := row.rates(side, conc); len(rs) > 0 {
					l.pts = append(l.pts, chartPoint{true, summarize(rs)})
				} else {
					l.pts = append(l.pts, chartPoint{})
				}
			}
			c.lines = append(c.lines, l)
		}
		out = append(out, c)
	}
	return out
}
