package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// The README's list of the settlement matrix's columns is the world's,
// in order (its families, then its joins), and DESIGN.md names every
// family and join of both worlds: a family added to a world and not to
// the docs fails here (issue 25: the README listed 14 of 17).
func TestDocsListEveryFamily(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`one column per fault family\s*\(([^)]*)\)`).FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md: no \"one column per fault family (...)\" list of the settlement matrix's columns")
	}
	var listed []string
	for _, part := range regexp.MustCompile(`[,;]`).Split(string(m[1]), -1) {
		name := strings.TrimSpace(strings.Join(strings.Fields(part), " "))
		name = strings.TrimPrefix(name, "then the joined ")
		listed = append(listed, name)
	}
	var want []string
	for _, f := range faults.World.Columns() {
		want = append(want, string(f))
	}
	if strings.Join(listed, ",") != strings.Join(want, ",") {
		t.Errorf("README.md lists the settlement columns\n  %s\nthe world has\n  %s\n(fix README.md's \"one column per fault family\" list; reproduce: go test -run TestDocsListEveryFamily ./cmd/onceproof)", strings.Join(listed, ", "), strings.Join(want, ", "))
	}
	design, err := os.ReadFile("../../DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		name string
		cols []engine.Family
	}{{"settlement", faults.World.Columns()}, {"loot", lootfaults.World.Columns()}} {
		for _, f := range w.cols {
			if !regexp.MustCompile(`(^|[^a-z-])` + regexp.QuoteMeta(string(f)) + `([^a-z-]|$)`).Match(design) {
				t.Errorf("DESIGN.md never names the %s family %q (reproduce: go test -run TestDocsListEveryFamily ./cmd/onceproof)", w.name, f)
			}
		}
	}
}
