package engine

import (
	"testing"
)

// TestWorldDefaultsAreTheDocumentedOnes: a World with no optional func set
// is completed with the defaults World's doc gives, so a world author who
// leaves one nil gets what the doc promises, and the engine never calls a
// nil func.
func TestWorldDefaultsAreTheDocumentedOnes(t *testing.T) {
	type sched struct{ n int }
	w := World[namedDesign, sched, struct{}]{}.Complete()
	const repro = "(go test ./engine -run TestWorldDefaultsAreTheDocumentedOnes)"
	h := History[sched, struct{}]{}
	e := Event[struct{}]{Node: 2, Kind: EvWorld + 1}
	s := sched{n: 7}
	checks := []struct {
		field     string
		got, want any
	}{
		{"FamilyDoc", w.FamilyDoc("clean"), ""},
		{"Describe", w.Describe("NoDup"), ""},
		{"Runs", w.Runs("clean", 37), 37},
		{"Exercises", len(w.Exercises("clean")), 0},
		{"CheckWorld", w.CheckWorld(s), error(nil)},
		{"Drops", len(w.Drops(s)), 0},
		{"Coverage", len(w.Coverage(h)), 0},
		{"GroundTruth", w.GroundTruth(h), ""},
		{"AckName", w.AckName(3), "ack3"},
		{"KindName", w.KindName(EvWorld + 1), "kind17"}, // EvWorld is 16
		{"EventText", w.EventText(h, e), w.KindName(EvWorld + 1)},
		{"Participants", w.Participants(), ""},
		{"MermaidLine", w.MermaidLine(h, e), "Note over N2: " + w.KindName(EvWorld+1)},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("nil %s: got %#v, want %#v %s", c.field, c.got, c.want, repro)
		}
	}
	if c, changed := w.Canonical(s); changed || c != s {
		t.Errorf("nil Canonical: got %v, %v, want the schedule unchanged and false %s", c, changed, repro)
	}
	if all, scope, ok := w.Exhaustive("clean"); ok || all != nil || scope != "" {
		t.Errorf("nil Exhaustive: got ok=%v scope=%q, want no exhaustive family %s", ok, scope, repro)
	}
}

// TestWorldCompleteKeepsWhatIsSet: complete fills only nil funcs; a
// world's own are kept.
func TestWorldCompleteKeepsWhatIsSet(t *testing.T) {
	w := World[namedDesign, int, struct{}]{
		Runs:    func(_ Family, n int) int { return 2 * n },
		AckName: func(Ack) string { return "mine" },
	}.Complete()
	if got := w.Runs("clean", 5); got != 10 {
		t.Errorf("Runs: got %d, want the world's 10 (go test ./engine -run TestWorldCompleteKeepsWhatIsSet)", got)
	}
	if got := w.AckName(1); got != "mine" {
		t.Errorf("AckName: got %q, want the world's %q (go test ./engine -run TestWorldCompleteKeepsWhatIsSet)", got, "mine")
	}
}

// namedDesign is the least Design: a name.
type namedDesign string

func (d namedDesign) Name() string { return string(d) }
