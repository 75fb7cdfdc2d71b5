package main

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// A point with fewer samples than an interval needs (one run) has no
// upper end; the y axis still reaches its median (it once stopped at 1,
// drawing every such point at the top).
func TestChartScalesToMediansWithoutIntervals(t *testing.T) {
	c := chart{file: "one-run.svg", xs: []string{"1"}, lines: []chartLine{{name: "ref",
		pts: []chartPoint{{true, summarize([]float64{400})}}}}}
	if svg := c.svg(); !strings.Contains(svg, `dominant-baseline="middle">400</text>`) {
		t.Errorf("a chart of one point at 400 without an interval has no 400 tick; go test -count=1 -run TestChartScalesToMediansWithoutIntervals ./bench/cmd/benchsummary:\n%s", svg)
	}
}

// Rates of millions a second are labelled in thousands, so the y axis's
// labels fit its margin of five characters.
func TestChartLabelsLargeRatesInThousands(t *testing.T) {
	c := chart{file: "fast.svg", xs: []string{"1"}, lines: []chartLine{{name: "inproc",
		pts: []chartPoint{{true, summary{1.4e6, 1.3e6, 1.5e6}}}}}}
	if svg := c.svg(); !strings.Contains(svg, `dominant-baseline="middle">1500k</text>`) {
		t.Errorf("a chart reaching 1500000 has no 1500k tick; go test -count=1 -run TestChartLabelsLargeRatesInThousands ./bench/cmd/benchsummary:\n%s", svg)
	}
}

// wellFormed fails t unless c's SVG is well-formed XML.
func wellFormed(t *testing.T, c chart, repro string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(c.svg()))
	for {
		_, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v; %s", c.file, err, repro)
		}
	}
}
