// Command benchsummary reads a Go benchmark file of package bench (make bench
// writes one) and writes a Markdown summary: each implementation's time per
// operation as a ratio to ref's with a confidence interval, the other metrics
// (bytes per live entry, catch rate, allocations), the parallel speedup, the
// Settle-versus-Put comparison, and the targets met or missed; and
// SVG charts beside it (ns/op against the live-set size per implementation,
// throughput against cores), which the summary shows.
//
// Usage:
//
//	go run ./bench/cmd/benchsummary [-in results/bench/baseline.txt] [-out results/bench/summary.md]
//
// The committed results/bench/summary.md is generated from the committed
// baseline; TestSummaryIsUpToDate fails when it is stale (rewrite it with
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
	flag.Parse()
	md, charts, err := summarizeFile(*in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
	}
	if *out == "-" {
		fmt.Print(md)
		return
	}
	if err := writeSummary(*out, md, charts); err != nil {
		fmt.Fprintln(os.Stderr, "benchsummary:", err)
		os.Exit(1)
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
