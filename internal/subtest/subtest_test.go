package subtest

import "testing"

func TestPatternAnchorsEveryLevelAndQuotes(t *testing.T) {
	for name, want := range map[string]string{
		"TestX":               "^TestX$",
		"TestX/claim/one-row": "^TestX$/^claim$/^one-row$",
		"TestX/a.b+c":         `^TestX$/^a\.b\+c$`,
	} {
		if got := Pattern(name); got != want {
			t.Errorf("Pattern(%q) = %q, want %q", name, got, want)
		}
	}
}
