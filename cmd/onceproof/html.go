package main

import (
	"fmt"
	"html/template"
	"slices"
	"strings"

	"github.com/onceproof/onceproof/engine"
)

// The HTML reports: matrix.html (a heat map of designs x families) and,
// per counterexample, counterexamples/<name>.html (its timeline drawn as
// lanes). They are rendered from the same Matrix as matrix.md, by
// html/template into plain HTML with inline CSS, SVG and a few lines of
// JS: no chart library, no network, so a page opens offline and
// regenerates byte for byte (the committed ones are checked by
// TestCommittedResultsAreCurrent like the markdown). What they show comes
// from the functions matrix.md and the counterexample .md use (Cell.Text,
// cellCoverage, engine.TimelineEvents), so the two renderings never
// disagree.

// cellKind is how a heat-map cell reads: its class (the colour) and its
// glyph (so it reads without colour too).
type cellKind struct{ Class, Glyph, Meaning string }

var (
	kindHolds    = cellKind{"holds", "✓", "holds (no counterexample in its runs)"}
	kindDeclared = cellKind{"declared", "✗", "fails as its design declares"}
	kindFails    = cellKind{"fails", "✗!", "fails a property its design does not declare"}
	kindUnjudged = cellKind{"unjudged", "?", "not judged: runs out of budget, family not exercised, or a harness error"}
	// kindMissed is a cell that holds where its design declares a failure:
	// a mismatch too (the checker lost its teeth, or the budget is small).
	kindMissed = cellKind{"missed", "✓!", "holds, but its design declares a failure"}
	cellKinds  = []cellKind{kindHolds, kindDeclared, kindFails, kindUnjudged, kindMissed}
)

// kindOf classifies c: not judged first (an unknown run is no verdict,
// whatever else the cell saw), then by whether its failures are the
// declared ones.
func kindOf[S, X any](c engine.Cell[S, X]) cellKind {
	switch {
	case c.Harness != nil || c.Unknown > 0 || len(c.Unexercised) > 0:
		return kindUnjudged
	case len(c.Failed) > 0 && slices.Equal(c.Failed, c.Expected):
		return kindDeclared
	case len(c.Failed) > 0:
		return kindFails
	case len(c.Expected) > 0:
		return kindMissed
	}
	return kindHolds
}

type htmlLink struct{ Href, Text, Title string }

type htmlCell struct {
	Class, Glyph, Title string
	Links               []htmlLink // its counterexamples, the first for Failed[0]
}

type htmlRow struct {
	Design, Doc, Href string
	Cells             []htmlCell
}

type htmlMatrix struct {
	Title, By   string
	Families    []htmlLink // Text the name, Title its doc
	Rows        []htmlRow
	Legend      []cellKind
	Properties  []htmlLink // Text the name, Title its meaning
	Summary     string
	StyleScript pageAssets
}

// pageAssets are the inline CSS and JS every page carries.
type pageAssets struct {
	CSS template.CSS
	JS  template.JS
}

// cellTitle is what hovering a cell shows: its verdict, its declaration,
// its runs and what they reached.
func cellTitle[D engine.Design, S, X any](sub subject[D, S, X], r engine.Row[S, X], c engine.Cell[S, X]) string {
	w := sub.world
	want := "holds"
	if len(c.Expected) > 0 {
		want = "fails " + joinProps(c.Expected)
	}
	runs := fmt.Sprintf("%d runs", c.Runs)
	if c.Scope != "" {
		runs = fmt.Sprintf("all %d runs of the scope %s", c.Runs, c.Scope)
	}
	t := fmt.Sprintf("%s under %s: %s\ndeclared: %s\n%s reached: %s", c.Design, c.Family, c.Text(), want, runs, cellCoverage(sub, r, c).Format(w.Reached))
	var nj []string
	for _, p := range w.Properties {
		if n := c.NotJudgedBy[p]; n > 0 {
			nj = append(nj, fmt.Sprintf("%s (%d of %d runs)", p, n, c.Runs))
		}
	}
	if len(nj) > 0 {
		t += "\nnot judged: " + strings.Join(nj, ", ")
	}
	return t
}

// matrixHTML renders matrix.html.
func matrixHTML[D engine.Design, S, X any](sub subject[D, S, X], m engine.Matrix[S, X], by string) string {
	w := sub.world
	p := htmlMatrix{Title: "Design matrix", By: by, Legend: cellKinds, StyleScript: assets}
	if sub.name != "settle" {
		p.Title += ": " + sub.name
	}
	for _, f := range m.Families {
		p.Families = append(p.Families, htmlLink{Text: string(f), Title: w.FamilyDoc(f)})
	}
	counts := map[string]int{}
	for _, r := range m.Rows {
		hr := htmlRow{Design: r.Design, Doc: strings.TrimSpace(r.Declaration.Doc), Href: "matrix.md#" + anchor(r.Design)}
		for _, c := range r.Cells {
			k := kindOf(c)
			counts[k.Class]++
			hc := htmlCell{Class: k.Class, Glyph: k.Glyph, Title: cellTitle(sub, r, c)}
			for _, cx := range c.Counterexamples {
				hc.Links = append(hc.Links, htmlLink{Href: "counterexamples/" + cx.Name + ".html", Text: joinProps(cx.Report.Failed())})
				// In the cell's title, not the link's: a link's own title
				// would hide the coverage while the pointer is on it.
				hc.Title += fmt.Sprintf("\ncounterexample %s: fails %s (%s)", cx.Name, joinProps(cx.Report.Failed()), engine.Size(w, cx.Schedule))
			}
			hr.Cells = append(hr.Cells, hc)
		}
		p.Rows = append(p.Rows, hr)
	}
	var parts []string
	for _, k := range cellKinds {
		if n := counts[k.Class]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.Class))
		}
	}
	p.Summary = fmt.Sprintf("%d designs x %d families, %d schedules per cell: %s.", len(m.Rows), len(m.Families), m.N, strings.Join(parts, ", "))
	for _, pr := range w.Properties {
		p.Properties = append(p.Properties, htmlLink{Text: string(pr), Title: w.Describe(pr)})
	}
	return render(matrixPage, p)
}

// The timeline's geometry, in SVG user units (CSS pixels at 100%).
const (
	tlLeft   = 64 // the lane names' column
	tlTop    = 44 // room for the virtual-time labels above the lanes
	tlColW   = 30 // one event per column: a glyph is 14 wide, so 16 apart
	tlLaneH  = 40 // a lane: glyph 14 and an attempt bar 6 below it, padded
	tlRight  = 24
	tlBottom = 12
	// tlLabelGap is the fewest columns between two time labels: a label
	// ("1.25s") is ~40 units wide at 11px, and it is drawn rotated -40°,
	// so two columns (60) keep neighbours apart.
	tlLabelGap = 2
)

type htmlEvent struct {
	X, Y   int
	Seq    int
	Class  string // "ev k-<kind>", plus Ring
	Symbol string // the <symbol> drawn
	Title  string
	// Ring marks an event an anomaly names: "viol" on the one that
	// completes it, "inv" on the others; Fault draws a line across the
	// lanes at a fault, a crash, a pause or a panic.
	Ring  string
	Fault bool
}

type htmlBar struct{ X, Y, W int }

type htmlLane struct {
	Y    int
	Name string
}

type htmlTime struct {
	X    int
	Text string
}

type htmlAnomaly struct {
	Property, Text, Events string
}

type htmlCounterexample struct {
	Title, By, Replay, Size, Matrix, Stem string
	Anomalies                             []htmlAnomaly
	GroundTruth, Schedule                 string
	Width, Height                         int
	Left, Top, TimeY, LanesEnd            int // geometry the template draws with
	Lanes                                 []htmlLane
	Times                                 []htmlTime
	Bars                                  []htmlBar
	Events                                []htmlEvent
	Verdicts                              []htmlLink // Text the property, Title the outcome
	StyleScript                           pageAssets
}

// symbolOf is the glyph a kind of event is drawn with: faults in red
// shapes of their own, so they show at a glance and without colour.
func symbolOf(k engine.EventKind) string {
	switch k {
	case engine.EvArrive:
		return "s-arrive"
	case engine.EvAck:
		return "s-ack"
	case engine.EvEffect:
		return "s-effect"
	case engine.EvFault:
		return "s-fault"
	case engine.EvCrash:
		return "s-crash"
	case engine.EvPause:
		return "s-pause"
	case engine.EvRecover:
		return "s-recover"
	case engine.EvPanic, engine.EvStall:
		return "s-panic"
	case engine.EvBudget, engine.EvGiveUp:
		return "s-stop"
	}
	return "s-world"
}

// counterexampleHTML renders a counterexample's page: what fails, how to
// replay it, and its timeline with one lane per node (and one for the
// runner, if an event is of no node), time along x one event per column.
func counterexampleHTML[D engine.Design, S, X any](sub subject[D, S, X], cx engine.Counterexample[S, X], replay, by string) string {
	w := sub.world
	s := cx.Schedule
	nodes := w.Frame(&s).Nodes
	evs := engine.TimelineEvents(w, cx.History, cx.Report)
	// A lane above the nodes for what no node did: the budget running
	// out, the watchdog, an event of no node (Node -1: the sender giving
	// up).
	offNode := func(e engine.TimelineEvent) bool {
		return e.Kind == engine.EvBudget || e.Kind == engine.EvStall || e.Node < 0
	}
	runner := false
	for _, e := range evs {
		if offNode(e) {
			runner = true
		} else if e.Node >= nodes {
			nodes = e.Node + 1
		}
	}
	p := htmlCounterexample{
		Title: fmt.Sprintf("%s under %s: fails %s", cx.Design, cx.Family, joinProps(cx.Report.Failed())),
		By:    by, Replay: replay, Matrix: "../matrix.html", Stem: cx.Name,
		Size:        fmt.Sprintf("%s, %d node(s), shrunk from generated schedule seed %d", engine.Size(w, s), w.Frame(&s).Nodes, cx.Seed),
		GroundTruth: w.GroundTruth(cx.History), Schedule: w.Format(s), StyleScript: assets,
	}
	lane := func(e engine.TimelineEvent) int {
		if offNode(e) {
			return 0
		}
		if runner {
			return e.Node + 1
		}
		return e.Node
	}
	if runner {
		p.Lanes = append(p.Lanes, htmlLane{Name: "runner"})
	}
	for n := range nodes {
		p.Lanes = append(p.Lanes, htmlLane{Name: fmt.Sprintf("node %d", n)})
	}
	for i := range p.Lanes {
		p.Lanes[i].Y = tlTop + i*tlLaneH + tlLaneH/2
	}
	// An attempt's bar runs from its first event to its last on its lane,
	// as Porcupine draws an operation from call to return.
	type span struct{ first, last, lane int }
	spans := map[int]*span{}
	var order []int
	lastLabel := -tlLabelGap
	prevAt := "" // the time of the previous column
	for i, e := range evs {
		x := tlLeft + i*tlColW + tlColW/2
		l := lane(e)
		class := "ev k-" + strings.ReplaceAll(e.Name, " ", "-")
		ring := ""
		if len(e.Anomalies) > 0 {
			ring = "viol"
		} else if len(e.Involved) > 0 {
			ring = "inv"
		}
		if ring != "" {
			class += " " + ring
		}
		// An event whose text is its name alone (a give-up) says it once.
		what := e.Name + " " + e.Text
		if e.Text == "" || e.Text == e.Name {
			what = e.Name
		}
		title := fmt.Sprintf("event %d at %v, %s: %s", e.Seq, e.At, p.Lanes[l].Name, what)
		if e.Attempt >= 0 {
			title = fmt.Sprintf("event %d at %v, %s, attempt %d: %s", e.Seq, e.At, p.Lanes[l].Name, e.Attempt, what)
		}
		for _, a := range e.Anomalies {
			title += fmt.Sprintf("\n!! %s: %s", a.Property, a.Explain)
		}
		if len(e.Involved) > 0 && len(e.Anomalies) == 0 {
			title += "\n(involved in " + joinProps(e.Involved) + ")"
		}
		p.Events = append(p.Events, htmlEvent{X: x, Y: p.Lanes[l].Y, Seq: e.Seq, Class: class, Symbol: symbolOf(e.Kind), Title: title, Ring: ring,
			Fault: e.Kind == engine.EvFault || e.Kind == engine.EvCrash || e.Kind == engine.EvPause || e.Kind == engine.EvPanic})
		if at := e.At.String(); at != prevAt && i-lastLabel >= tlLabelGap {
			p.Times = append(p.Times, htmlTime{X: x, Text: at})
			lastLabel, prevAt = i, at
		} else if at != prevAt {
			prevAt = at
		}
		if e.Attempt >= 0 && !offNode(e) {
			if sp := spans[e.Attempt]; sp != nil && sp.lane == l {
				sp.last = i
			} else if sp == nil {
				spans[e.Attempt] = &span{first: i, last: i, lane: l}
				order = append(order, e.Attempt)
			}
		}
	}
	for _, a := range order {
		sp := spans[a]
		p.Bars = append(p.Bars, htmlBar{X: tlLeft + sp.first*tlColW + tlColW/2, Y: p.Lanes[sp.lane].Y + 9, W: (sp.last - sp.first) * tlColW})
	}
	p.Width = tlLeft + len(evs)*tlColW + tlRight
	p.Left, p.Top, p.TimeY = tlLeft, tlTop, tlTop-8
	p.LanesEnd = tlTop + len(p.Lanes)*tlLaneH
	p.Height = p.LanesEnd + tlBottom
	for _, v := range cx.Report {
		p.Verdicts = append(p.Verdicts, htmlLink{Text: string(v.Property), Title: v.Outcome.String()})
		for _, a := range v.Anomalies {
			seqs := make([]string, len(a.Events))
			for i, s := range a.Events {
				seqs[i] = fmt.Sprint(s)
			}
			p.Anomalies = append(p.Anomalies, htmlAnomaly{Property: string(a.Property), Events: strings.Join(seqs, " "),
				Text: fmt.Sprintf("at %v: %s (events %s)", a.At, a.Explain, strings.Join(seqs, ", "))})
		}
	}
	return render(counterexamplePage, p)
}

func render(t *template.Template, data any) string {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		// The templates are fixed and the data plain values: an error is
		// a bug in this file, which every results test would show.
		panic(fmt.Sprintf("rendering %s: %v", t.Name(), err))
	}
	return b.String()
}
