package mysql

import "strconv"

// jsonRows writes a batch routine's array argument, a JSON array of rows
// of strings and integers, without encoding/json's reflection over
// [][]any: a settle batch sends three such arrays and a BeginSettle batch
// one, and their json.Marshal was 5.6% of the client's CPU in BenchmarkLoot
// op=settle impl=ref-batched conc=16 (-cpuprofile, 20000x). Strings must be
// valid UTF-8, which every caller checked before it batched (batchable,
// encodeDecision, loot.CheckSessionNo): JSON cannot carry anything else, and
// encoding/json would have written U+FFFD in its place.
type jsonRows struct {
	b     []byte
	cells int // in the row being written
}

// newJSONRows starts an array in a buffer of capacity bytes.
func newJSONRows(capacity int) *jsonRows {
	return &jsonRows{b: append(make([]byte, 0, capacity), '[')}
}

// row starts a row, ending the one before.
func (j *jsonRows) row() {
	if len(j.b) > 1 {
		j.b = append(j.b, ']', ',')
	}
	j.b = append(j.b, '[')
	j.cells = 0
}

// str and int write a cell of the row.
func (j *jsonRows) str(v string) {
	j.sep()
	j.b = appendJSONString(j.b, v)
}

func (j *jsonRows) int(v int64) {
	j.sep()
	j.b = strconv.AppendInt(j.b, v, 10)
}

func (j *jsonRows) sep() {
	if j.cells > 0 {
		j.b = append(j.b, ',')
	}
	j.cells++
}

// String ends the array.
func (j *jsonRows) String() string {
	if len(j.b) > 1 {
		j.b = append(j.b, ']')
	}
	return string(append(j.b, ']'))
}

// appendJSONString appends v as a JSON string: the quote, the backslash
// and the control characters escaped (RFC 8259, section 7), every other
// byte as it is. encoding/json also escapes <, > and & (for HTML) and
// U+2028 and U+2029 (for JavaScript), which decode to the same string.
func appendJSONString(b []byte, v string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, v[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(append(b, v[start:]...), '"')
}
