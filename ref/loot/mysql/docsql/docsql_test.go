package docsql

import (
	"slices"
	"strings"
	"testing"
)

// TestPlaceholdersBecomeParams: every #{name} becomes one ? and one entry
// of Params, in order, and nothing else of the document's text changes.
func TestPlaceholdersBecomeParams(t *testing.T) {
	want := map[string][]string{
		"upsertIntent":      {"sessionNo", "playerId", "intentType", "priority", "fairScore", "createdAt"},
		"lockForSettle":     {"sessionNo"},
		"selectRanked":      {"sessionNo"},
		"insertGrantIgnore": {"grantNo", "sessionNo", "playerId", "lootCode"},
		"markClosed":        {"allocated", "sessionNo"},
		"createSession":     {"sessionNo", "dungeonCode", "lootCode", "totalQuantity", "deadlineAt"},
		"checkIntent":       {"sessionNo"},
		"cancel":            {"sessionNo"},
		"selectPending":     nil,
		"markSuccess":       {"grantNo"},
	}
	for _, s := range Statements() {
		if !slices.Equal(s.Params, want[s.Name]) {
			t.Errorf("%s: Params %v, want %v; reproduce: go test ./ref/loot/mysql/docsql -run %s", s.Name, s.Params, want[s.Name], t.Name())
		}
		if strings.Count(s.SQL, "?") != len(s.Params) || strings.Contains(s.SQL, "#{") {
			t.Errorf("%s: SQL %q does not take exactly its %d params", s.Name, s.SQL, len(s.Params))
		}
		back := s.SQL
		for _, p := range s.Params {
			back = strings.Replace(back, "?", "#{"+p+"}", 1)
		}
		if back != s.Mapper {
			t.Errorf("%s: SQL differs from the document's text beyond its placeholders:\n%s\n%s", s.Name, back, s.Mapper)
		}
	}
}
