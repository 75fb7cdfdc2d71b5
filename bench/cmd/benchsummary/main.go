// Command benchsummary reads a Go benchmark file of package bench (make bench
// writes one) and writes a Markdown summary: each implementation's time per
// operation as a ratio to ref's with a confidence interval, the other metrics
// (bytes per live entry, catch rate, allocations), the parallel speedup, the
// Settle-versus-Put comparison, and the targets met or missed; and
// SVG charts beside it (ns/op against the live-set size per implementation,
// throughput against cores), which the summary shows. From the loot
// benchmark file (make bench-loot writes one) it writes the loot summary:
// each store's rates as ratios to the source document's design with
// intervals, round trips and CPU per op side by side, and a chart of ops/s
// against concurrency per store and op.
//
// Usage:
//
//	go run ./bench/cmd/benchsummary [-in results/bench/baseline.txt] [-out results/bench/summary.md]
//		[-loot-in results/bench/loot-baseline.txt] [-loot-out results/bench/loot-summary.md]
//
// The committed summaries are generated from the committed baselines;
// TestSummaryIsUpToDate fails when one is stale (rewrite them with
// go test ./bench/cmd/benchsummary -update, or make bench-summary).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	in := flag.String("in", "results/bench/baseline.txt", "benchmark file to read")
	out := flag.String("out", "results/bench/summary.md", "summary to write (- for standard output)")
	lootIn := flag.String("loot-in", "", "loot benchmark file to read (empty: no loot summary)")
	lootOut := flag.String("loot-out", "results/bench/loot-summary.md", "loot summary to write (- for standard output)")
	flag.Parse()
	for _, s := range []struct {
		in, out   string
		summarize func(string) (string, []chart, error)
	}{{*in, *out, summarizeFile}, {*lootIn, *lootOut, lootSummarizeFile}} {
		if s.in == "" {
			continue
		}
		md, charts, err := s.summarize(s.in)
		if err == nil && s.out == "-" {
			fmt.Print(md)
		} else if err == nil {
			err = writeSummary(s.out, md, charts)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchsummary:", err)
			os.Exit(1)
		}
	}
}

// writeSummary writes md to out and each chart's SVG beside it.
func writeSummary(out, md string, charts []chart) error {
	for _, c := range charts {
		if err := os.WriteFile(filepath.Join(filepath.Dir(out), c.file), []byte(c.svg()), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(out, []byte(md), 0o644)
}
