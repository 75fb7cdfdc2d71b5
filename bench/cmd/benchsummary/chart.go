package main

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// A chart is a line chart as plain SVG: one line per implementation
// through its medians, a whisker per point for the median's 95% interval,
// a tooltip (<title>) per point with the numbers. Plain SVG written here
// rather than a chart library: the output is a few kilobytes, opens in any
// browser offline, and is byte for byte the same from the same baseline
// (TestSummaryIsUpToDate compares it), which a library's generated ids or
// float formatting would not promise.
type chart struct {
	file, title, xLabel, yLabel string
	// xs are the x positions' labels, in order; logX places them by
	// log2 of their value (live-set sizes 1024..1048576), else evenly.
	xs    []string
	logX  bool
	lines []chartLine
}

type chartLine struct {
	name string
	pts  []chartPoint // one per x; ok false where the series has none
}

type chartPoint struct {
	ok bool
	summary
}

// Geometry: 760x420 leaves a 560x300 plot between a left margin wide
// enough for five-digit tick labels and a right margin for a legend of
// seven names of up to 10 characters.
const (
	chartW, chartH         = 760, 420
	plotL, plotT           = 70, 40
	plotW, plotH           = 560, 300
	legendX                = plotL + plotW + 20
	chartFont              = `font-family="sans-serif" font-size="12"`
	yTicks                 = 5
	whiskerHalf, pointSize = 4, 3.5
)

// palette: the Okabe-Ito colours, told apart with every common colour
// vision deficiency; ref is always the first (black).
var palette = []string{"#000000", "#E69F00", "#56B4E9", "#009E73", "#D55E00", "#0072B2", "#CC79A7", "#999999"}

func (c chart) svg() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	top := 0.0
	for _, l := range c.lines {
		for _, pt := range l.pts {
			// A point whose interval has no upper end (fewer samples than
			// an interval needs) still counts by its median.
			if pt.ok {
				top = max(top, pt.center)
			}
			if pt.ok && !math.IsInf(pt.hi, 0) && !math.IsNaN(pt.hi) {
				top = max(top, pt.hi)
			}
		}
	}
	step := niceStep(top / yTicks)
	top = step * math.Ceil(top/step)
	if top == 0 {
		top = 1
	}
	// The axis labels carry the step's digits: 0, 200, 400 or 0, 0.5, 1.0.
	decimals := max(0, int(-math.Floor(math.Log10(step))))
	if step >= 1 {
		decimals = 0
	}
	x := func(i int) float64 {
		if len(c.xs) == 1 {
			return plotL + plotW/2
		}
		if c.logX {
			lo, _ := strconv.ParseFloat(c.xs[0], 64)
			hi, _ := strconv.ParseFloat(c.xs[len(c.xs)-1], 64)
			v, _ := strconv.ParseFloat(c.xs[i], 64)
			return plotL + plotW*(math.Log2(v)-math.Log2(lo))/(math.Log2(hi)-math.Log2(lo))
		}
		return plotL + plotW*float64(i)/float64(len(c.xs)-1)
	}
	y := func(v float64) float64 { return plotT + plotH*(1-min(v, top)/top) }

	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" %s>`+"\n", chartW, chartH, chartW, chartH, chartFont)
	p(`<title>%s</title>`+"\n", html.EscapeString(c.title))
	p(`<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", chartW, chartH)
	p(`<text x="%d" y="22" font-size="15" font-weight="bold">%s</text>`+"\n", plotL, html.EscapeString(c.title))
	for i := 0; i <= yTicks; i++ {
		v := top * float64(i) / yTicks
		p(`<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e0e0e0"/>`+"\n", plotL, plotL+plotW, y(v), y(v))
		p(`<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", plotL-6, y(v), axisLabel(v, decimals))
	}
	for i, xl := range c.xs {
		p(`<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(i), plotT+plotH+18, html.EscapeString(xl))
	}
	p(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#000000"/>`+"\n", plotL, plotL+plotW, plotT+plotH, plotT+plotH)
	p(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#000000"/>`+"\n", plotL, plotL, plotT, plotT+plotH)
	p(`<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", plotL+plotW/2, plotT+plotH+40, html.EscapeString(c.xLabel))
	p(`<text transform="translate(16 %d) rotate(-90)" text-anchor="middle">%s</text>`+"\n", plotT+plotH/2, html.EscapeString(c.yLabel))
	for li, l := range c.lines {
		col := palette[li%len(palette)]
		var pts []string
		for i, pt := range l.pts {
			if pt.ok {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(pt.center)))
			}
		}
		p(`<g class="line" data-impl="%s">`+"\n", html.EscapeString(l.name))
		p(`<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.Join(pts, " "))
		for i, pt := range l.pts {
			if !pt.ok {
				continue
			}
			cx := x(i)
			if !math.IsInf(pt.hi, 0) && !math.IsNaN(pt.lo) && pt.lo > 0 {
				p(`<path d="M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f" stroke="%s"/>`+"\n",
					cx, y(pt.lo), y(pt.hi), cx-whiskerHalf, y(pt.lo), cx+whiskerHalf, cx-whiskerHalf, y(pt.hi), cx+whiskerHalf, col)
			}
			p(`<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s"><title>%s %s: %s [%s, %s]</title></circle>`+"\n",
				cx, y(pt.center), pointSize, col, html.EscapeString(l.name), html.EscapeString(c.xs[i]), tick(pt.center), tick(pt.lo), tick(pt.hi))
		}
		p("</g>\n")
		ly := plotT + 10 + 20*li
		p(`<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", legendX, legendX+18, ly, ly, col)
		p(`<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", legendX+24, ly, html.EscapeString(l.name))
	}
	p("</svg>\n")
	return b.String()
}

// niceStep is the tick step 1, 2 or 5 times a power of ten at or above
// raw, so five ticks cover the data with round labels.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}

// axisLabel is a y-axis value with decimals digits, or above 10000 in
// thousands ("1500k"): the left margin holds five characters, and lootd's
// in-process rates reach millions a second.
func axisLabel(v float64, decimals int) string {
	if v >= 1e4 {
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// tick formats a value with the digits a chart label needs.
func tick(v float64) string {
	switch {
	case math.IsInf(v, 0) || math.IsNaN(v):
		return "?"
	case v >= 100 || v == 0:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}
