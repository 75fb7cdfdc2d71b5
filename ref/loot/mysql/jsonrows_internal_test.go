package mysql

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// TestJSONRowsDecodeAsJSONMarshal: an array jsonRows writes decodes to
// the rows encoding/json writes for the same strings and integers, on
// drawn rows (any valid UTF-8 string, control characters, quotes and
// backslashes among them; any int64; empty rows and no rows).
func TestJSONRowsDecodeAsJSONMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cell := rapid.OneOf(
			rapid.Map(rapid.String(), func(s string) any { return s }),
			rapid.Map(rapid.StringOf(rapid.RuneFrom([]rune{'"', '\\', '\n', '\r', '\t', 0, 0x1f, 0x7f, 'a', 'é', '\u2028', '<'})), func(s string) any { return s }),
			rapid.Map(rapid.Int64(), func(v int64) any { return v }),
		)
		rows := rapid.SliceOf(rapid.SliceOf(cell)).Draw(t, "rows")
		j := newJSONRows(0)
		for _, r := range rows {
			j.row()
			for _, c := range r {
				switch v := c.(type) {
				case string:
					j.str(v)
				case int64:
					j.int(v)
				}
			}
		}
		want, err := json.Marshal(rows)
		if err != nil {
			t.Fatal(err)
		}
		var got, wantRows any
		dec := func(b []byte, v *any) {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s does not decode: %v", b, err)
			}
		}
		dec([]byte(j.String()), &got)
		dec(want, &wantRows)
		if diff := cmp.Diff(wantRows, got); diff != "" {
			t.Fatalf("jsonRows wrote %s; json.Marshal %s (-json.Marshal +jsonRows decoded):\n%s", j.String(), want, diff)
		}
	})
}
