package foursig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// The save: how a player's window is persisted, as source document 001
// describes it ("兼容：老存档怎么办"):
//
//	老存档是映射表，签名为键；新存档是数组，签名为元素。
//	首键为一即数组，直接入窗；有值非一即老数据，收键归一。
//
// A save is a table in the Lua sense, written as one JSON object:
//
//   - the new save is an array: keys "1".."n" in order, each value a
//     signature's text, oldest first: {"1":"7/3/20/0","2":"7/3/-5/1"}
//   - the legacy save is a map keyed by signature, every value true:
//     {"7/3/20/0":true,"7/3/-5/1":true}
//   - {} is the empty window of a player who never settled.
//
// Load tells them apart by the first key, as the document says: "1" is the
// array form and goes into the window as is; any other first key is the
// legacy form, whose keys are collected into an array ("收键归一").
//
// A corrupt or truncated save is an error, never an empty window: an empty
// window would re-open every replay of the player's last two matches.

// ErrCorruptSave wraps every error Load returns for bytes that are not a
// save.
var ErrCorruptSave = errors.New("foursig: corrupt save")

// Save returns the new (array) form of w.
func (w Window) Save() []byte {
	b := make([]byte, 0, 2+len(w)*24)
	b = append(b, '{')
	for i, g := range w {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(i+1), 10)
		b = append(b, `":"`...)
		b = append(b, g.String()...)
		b = append(b, '"')
	}
	return append(b, '}')
}

// SaveLegacy returns the legacy (map) form of the signatures in sigs, with
// the keys in the order given: a legacy writer filled and iterated its map
// in an order nobody can recover, so tests pass every order.
func SaveLegacy(sigs []Signature) []byte {
	b := []byte{'{'}
	for i, g := range sigs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, g.String()...)
		b = append(b, `":true`...)
	}
	return append(b, '}')
}

// Load reads a save of either form into a window of capacity c (>= 1).
//
// The legacy migration's order: a map keeps no order, yet the FIFO needs one
// (it decides which signature is evicted first). Load sorts the legacy
// signatures by (Round, Room, Net, Final) ascending and treats that as oldest
// first. Round is first because it is the only field that grows with time
// (it counts up within a room), so within the current room the guess is
// right; across rooms nothing in a signature says which is older, and any
// fixed order is as good as another, as long as it is total and does not
// depend on how the map was filled or iterated (tested). A legacy map with
// more than c signatures keeps the last c of that order, which is what FIFO
// eviction would have kept had the order been known; the dropped ones are the
// guessed-oldest.
func Load(save []byte, c int) (Window, error) {
	if c < 1 {
		return nil, fmt.Errorf("foursig: load: capacity must be >= 1, got %d", c)
	}
	keys, vals, err := readTable(save)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return Window{}, nil
	}
	if keys[0] == "1" {
		return loadArray(keys, vals, c)
	}
	return loadLegacy(keys, vals, c)
}

func loadArray(keys []string, vals []json.RawMessage, c int) (Window, error) {
	if len(keys) > c {
		return nil, fmt.Errorf("%w: array of %d signatures, capacity is %d", ErrCorruptSave, len(keys), c)
	}
	w := make(Window, 0, len(keys))
	for i, k := range keys {
		if k != strconv.Itoa(i+1) {
			return nil, fmt.Errorf("%w: array key %d is %q, want %q", ErrCorruptSave, i+1, k, strconv.Itoa(i+1))
		}
		var text string
		if err := json.Unmarshal(vals[i], &text); err != nil {
			return nil, fmt.Errorf("%w: array element %d is %s, want a signature string", ErrCorruptSave, i+1, vals[i])
		}
		g, err := ParseSignature(text)
		if err != nil {
			return nil, fmt.Errorf("%w: array element %d: %w", ErrCorruptSave, i+1, err)
		}
		if w.Contains(g) {
			return nil, fmt.Errorf("%w: array element %d repeats signature %q", ErrCorruptSave, i+1, text)
		}
		w = append(w, g)
	}
	return w, nil
}

func loadLegacy(keys []string, vals []json.RawMessage, c int) (Window, error) {
	w := make(Window, 0, len(keys))
	for i, k := range keys {
		g, err := ParseSignature(k)
		if err != nil {
			return nil, fmt.Errorf("%w: legacy key %d: %w", ErrCorruptSave, i+1, err)
		}
		if string(vals[i]) != "true" {
			return nil, fmt.Errorf("%w: legacy key %q has value %s, want true", ErrCorruptSave, k, vals[i])
		}
		if w.Contains(g) {
			return nil, fmt.Errorf("%w: legacy key %q appears twice", ErrCorruptSave, k)
		}
		w = append(w, g)
	}
	slices.SortFunc(w, func(a, b Signature) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	if len(w) > c {
		w = w[len(w)-c:]
	}
	return w, nil
}

// readTable reads one JSON object, keeping its keys in text order (the
// "first key" the format turns on) and each value unparsed.
func readTable(save []byte) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(save)) == 0 {
		return nil, nil, fmt.Errorf("%w: empty (a player without a save has no record, not an empty one)", ErrCorruptSave)
	}
	dec := json.NewDecoder(bytes.NewReader(save))
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrCorruptSave, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, fmt.Errorf("%w: want a table {...}, got %v", ErrCorruptSave, tok)
	}
	var keys []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: key %d: %w", ErrCorruptSave, len(keys)+1, err)
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, fmt.Errorf("%w: key %d is %v, want a string", ErrCorruptSave, len(keys)+1, tok)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("%w: value of key %q: %w", ErrCorruptSave, k, err)
		}
		keys = append(keys, k)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, nil, fmt.Errorf("%w: unterminated table: %w", ErrCorruptSave, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: trailing data after the table", ErrCorruptSave)
	}
	return keys, vals, nil
}
