package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// listed parses `onceproof list`: each entry's name (its line indented 2,
// up to " (") and its description, the lines indented 6 under it joined
// with spaces.
func listed(out string) map[string]string {
	entries := map[string]string{}
	name := ""
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "      "):
			entries[name] = strings.TrimSpace(entries[name] + " " + strings.TrimSpace(line))
		case strings.HasPrefix(line, "  ") && line[2] != ' ':
			name, _, _ = strings.Cut(line[2:], " (")
			entries[name] = ""
		default:
			name = ""
		}
	}
	return entries
}

// `onceproof list` wraps its descriptions at COLUMNS (100 when it is unset
// and stdout is no terminal), each indented under its name: no line is
// wider unless one word is, and every description reads back whole.
func TestListWrapsDescriptionsUnderTheirNames(t *testing.T) {
	for _, tc := range []struct {
		columns string
		width   int
	}{{"", proseWidth}, {"72", 72}, {"nonsense", proseWidth}} {
		t.Setenv("COLUMNS", tc.columns)
		code, out, errs := runCLI("list")
		if code != exitOK {
			t.Fatalf("COLUMNS=%q onceproof list: exit %d\n%s", tc.columns, code, errs)
		}
		for _, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > tc.width && strings.Contains(strings.TrimSpace(line), " ") {
				t.Errorf("COLUMNS=%q onceproof list: a line of %d characters, over %d:\n%s\n(go test ./cmd/onceproof -run '^TestListWrapsDescriptionsUnderTheirNames$')", tc.columns, n, tc.width, line)
			}
		}
		settle, loot, _ := strings.Cut(out, "\nloot designs")
		for _, w := range []struct {
			out   string
			names []engine.Family
			doc   func(engine.Family) string
		}{{settle, faults.World.Columns(), faults.World.FamilyDoc}, {loot, lootfaults.World.Columns(), lootfaults.World.FamilyDoc}} {
			entries := listed(w.out)
			for _, f := range w.names {
				if got, want := entries[string(f)], strings.Join(strings.Fields(w.doc(f)), " "); got != want {
					t.Errorf("COLUMNS=%q onceproof list: family %s reads back as %q under its name, want its doc %q (go test ./cmd/onceproof -run '^TestListWrapsDescriptionsUnderTheirNames$')", tc.columns, f, got, want)
				}
			}
		}
	}
}
