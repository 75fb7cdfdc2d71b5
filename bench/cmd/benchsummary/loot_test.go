package main

import (
	"fmt"
	"strings"
	"testing"
)

// lootSynthetic is a loot benchmark file with known medians, as make
// bench-loot writes it (the runs' lines in run order):
//   - PostgreSQL settles at conc 1: ref 180..220 and doc 90..110 in six
//     runs, each run's ref exactly twice its doc, so the paired ratio is
//     2.00x [2.00, 2.00] where the unpaired one would be [1.64, 2.44];
//     round trips 4 against 12;
//   - PostgreSQL at conc 64: ref 300 in six runs, doc 100 in seven (one
//     more than ref: no pairing), 3.00x unpaired;
//   - MariaDB's benchmark of the same name: ref 50 and doc 100, 0.50x, its
//     own row (pooled with PostgreSQL's it would not be);
//   - lootd: http-1 600 against inproc 1000, 0.60x.
func lootSynthetic() string {
	var b strings.Builder
	b.WriteString("goos: linux\ngoarch: amd64\ncpu: Test CPU    \n") // padded, as go test pads it
	pkg := func(p string) { fmt.Fprintf(&b, "pkg: github.com/onceproof/onceproof/%s\n", p) }
	line := func(name string, rate float64, unit, more string) {
		fmt.Fprintf(&b, "Benchmark%s-2 100 1000 ns/op %g %s %s\n", name, rate, unit, more)
	}
	refs, docs := []float64{200, 220, 180, 210, 190, 200}, []float64{100, 110, 90, 105, 95, 100}
	for run := range 7 {
		pkg("ref/loot/postgres")
		if run < 6 {
			line("LootSettleDeliver/impl=ref/conc=1", refs[run], "settles/s", "4 sql-rtt/op 1700 pg-cpu-us/op")
			line("LootSettleDeliver/impl=ref/conc=64", 300, "settles/s", "4 sql-rtt/op 1700 pg-cpu-us/op")
			line("LootSettleDeliver/impl=doc/conc=1", docs[run], "settles/s", "12 sql-rtt/op 1100 pg-cpu-us/op")
		}
		line("LootSettleDeliver/impl=doc/conc=64", 100, "settles/s", "12 sql-rtt/op 1100 pg-cpu-us/op")
		if run < 6 {
			pkg("ref/loot/mysql")
			line("LootSettleDeliver/impl=ref/conc=1", 50, "settles/s", "2 sql-rtt/op 900 db-cpu-us/op")
			line("LootSettleDeliver/impl=doc/conc=1", 100, "settles/s", "7 sql-rtt/op 500 db-cpu-us/op")
			pkg("cmd/lootd")
			line("LootHTTP/op=claim/target=inproc/conc=64", 1000, "claims/s", "100 bench-cpu-us/op")
			line("LootHTTP/op=claim/target=http-1/conc=64", 600, "claims/s", "90 bench-cpu-us/op 160 lootd-cpu-us/op 0.6 x_inproc")
		}
	}
	return b.String()
}

const lootRepro = "go test -count=1 -run 'TestLoot' ./bench/cmd/benchsummary"

func TestLootSummaryRatiosOnKnownInput(t *testing.T) {
	tab, err := readLoot(strings.NewReader(lootSynthetic()), "synthetic")
	if err != nil {
		t.Fatalf("%v; %s", err, lootRepro)
	}
	md := tab.markdown("synthetic")
	for _, want := range []string{
		"- cpu: Test CPU\n",
		"accurate to 10 ms / b.N (b.N = 100 here: 100 us);",
		"## PostgreSQL: `github.com/onceproof/onceproof/ref/loot/postgres`",
		"## MariaDB: `github.com/onceproof/onceproof/ref/loot/mysql`",
		"## lootd over HTTP: `github.com/onceproof/onceproof/cmd/lootd`",
		"| LootSettleDeliver | 1 | ref | 200 settles/s | doc | 100 | 2.00x [2.00, 2.00] |",
		"| LootSettleDeliver | 64 | ref | 300 settles/s | doc | 100 | 3.00x [3.00, 3.00] unpaired |",
		"| LootSettleDeliver | 1 | ref | 50.00 settles/s | doc | 100 | 0.50x [0.50, 0.50] |",
		"| LootHTTP/op=claim | 64 | http-1 | 600 claims/s | inproc | 1000 | 0.60x [0.60, 0.60] |",
		// costs, the sides on adjacent rows, the units a store reports
		"| benchmark | conc | impl | rate | pg-cpu-us/op | sql-rtt/op |",
		"| LootSettleDeliver | 1 | ref | 200 settles/s | 1700 | 4.00 |\n| LootSettleDeliver | 1 | doc | 100 settles/s | 1100 | 12.00 |",
		"| benchmark | conc | impl | rate | db-cpu-us/op | sql-rtt/op |",
		"| LootHTTP/op=claim | 64 | inproc | 1000 claims/s | 100 | - |",
		"| LootHTTP/op=claim | 64 | http-1 | 600 claims/s | 90.00 | 160 |",
		// the targets: MariaDB's ref is below doc; PostgreSQL's 3x at conc 64
		"| PostgreSQL | LootSettleDeliver | 64 | ref | 3.00x [3.00, 3.00] | met |",
		"| MariaDB | LootSettleDeliver | 1 | ref | 0.50x [0.50, 0.50] | MISSED |",
		">= 2x doc at the highest conc on some store and op: met.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("loot summary lacks %q; %s; got:\n%s", want, lootRepro, md)
		}
	}
	// The baseline is never compared with itself.
	if strings.Contains(md, "| doc | 100 settles/s | doc |") || strings.Contains(md, "| inproc | 1000 claims/s | inproc |") {
		t.Errorf("a baseline side was compared with itself; %s; got:\n%s", lootRepro, md)
	}
}

// The charts of the known input: one a store and benchmark, the sides'
// lines in file order, each point's tooltip its median and interval, and
// the SVG well-formed XML.
func TestLootChartsOnKnownInput(t *testing.T) {
	tab, err := readLoot(strings.NewReader(lootSynthetic()), "synthetic")
	if err != nil {
		t.Fatalf("%v; %s", err, lootRepro)
	}
	charts := tab.charts()
	var files []string
	for _, c := range charts {
		files = append(files, c.file)
	}
	if want := "loot-postgres-lootsettledeliver.svg loot-mysql-lootsettledeliver.svg loot-lootd-loothttp-op-claim.svg"; strings.Join(files, " ") != want {
		t.Fatalf("loot charts %v, want %s; %s", files, want, lootRepro)
	}
	c := charts[0]
	if len(c.lines) != 2 || c.lines[0].name != "ref" || c.lines[1].name != "doc" {
		t.Fatalf("%s lines %+v, want ref then doc; %s", c.file, c.lines, lootRepro)
	}
	svg := c.svg()
	for _, want := range []string{
		`<title>ref 1: 200 [180, 220]</title>`,
		`<title>doc 1: 100 [90.0, 110]</title>`,
		`<title>doc 64: 100 [100, 100]</title>`,
		`settles/s (median, 95% interval)`,
		`concurrent callers (log scale)`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("%s lacks %s; %s:\n%s", c.file, want, lootRepro, svg)
		}
	}
	for _, c := range charts {
		wellFormed(t, c, lootRepro)
	}
}

// A file that is not the loot benchmarks' (a window baseline) is refused
// rather than summarised as rows without sides.
func TestLootSummaryRefusesOtherBenchmarks(t *testing.T) {
	_, err := readLoot(strings.NewReader(synthetic), "synthetic")
	if err == nil || !strings.Contains(err.Error(), "not a loot benchmark") {
		t.Errorf("readLoot of the window's synthetic file: %v, want not a loot benchmark; %s", err, lootRepro)
	}
}
