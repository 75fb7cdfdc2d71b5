package foursig

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// genSig draws signatures from small ranges so sets share fields, as real
// players' windows do.
func genSig() *rapid.Generator[Signature] {
	return rapid.Custom(func(t *rapid.T) Signature {
		return Signature{
			Room:  rapid.Uint32Range(0, 3).Draw(t, "room"),
			Round: rapid.Uint32Range(0, 4).Draw(t, "round"),
			Net:   rapid.Int64Range(-20, 20).Draw(t, "net"),
			Final: rapid.Bool().Draw(t, "final"),
		}
	})
}

func TestSaveRoundTripsTheArrayForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := Window(rapid.SliceOfNDistinct(genSig(), 0, Capacity, func(g Signature) Signature { return g }).Draw(t, "window"))
		got, err := Load(w.Save(), Capacity)
		if err != nil {
			t.Fatalf("Load(%s): %v", w.Save(), err)
		}
		if !slices.Equal(got, w) && !(len(got) == 0 && len(w) == 0) {
			t.Fatalf("Load(Save(%v)) = %v", w, got)
		}
	})
}

// TestLegacyLoadIgnoresMapOrder is the document's "遍历首键行为与填充顺序无
// 关，已实测钉死": a legacy map save gives the same window whatever order the
// map was filled in, or its keys iterated and written in. The writer is
// modelled twice: a real Go map (randomised iteration) and an explicit
// permutation drawn by rapid.
func TestLegacyLoadIgnoresMapOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sigs := rapid.SliceOfNDistinct(genSig(), 1, 2*Capacity, func(g Signature) Signature { return g }).Draw(t, "sigs")
		c := rapid.IntRange(1, 2*Capacity).Draw(t, "capacity")
		want, err := Load(SaveLegacy(sigs), c)
		if err != nil {
			t.Fatalf("Load(%s): %v", SaveLegacy(sigs), err)
		}
		perm := rapid.Permutation(sigs).Draw(t, "fill-order")
		got, err := Load(SaveLegacy(perm), c)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("fill order %v: Load = %v, %v; fill order %v gave %v", perm, got, err, sigs, want)
		}
		m := map[Signature]bool{}
		for _, g := range perm {
			m[g] = true
		}
		var iter []Signature
		for g := range m {
			iter = append(iter, g)
		}
		got, err = Load(SaveLegacy(iter), c)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("map iteration order %v: Load = %v, %v, want %v", iter, got, err, want)
		}
		if len(want) != min(c, len(sigs)) {
			t.Fatalf("legacy save of %d signatures at capacity %d loaded %d", len(sigs), c, len(want))
		}
	})
}

func TestLegacyLoadKeepsTheNewestByRound(t *testing.T) {
	// Room 2 rounds 1..3 then room 5 round 1: sorted by (round, room, ...)
	// the order is 2/1, 5/1, 2/2, 2/3; capacity 3 drops 2/1.
	sigs := []Signature{{Room: 2, Round: 3, Net: 10}, {Room: 5, Round: 1, Net: -10, Final: true}, {Room: 2, Round: 1, Net: 10}, {Room: 2, Round: 2}}
	got, err := Load(SaveLegacy(sigs), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := Window{{Room: 5, Round: 1, Net: -10, Final: true}, {Room: 2, Round: 2}, {Room: 2, Round: 3, Net: 10}}
	if !slices.Equal(got, want) {
		t.Fatalf("Load = %v, want %v", got, want)
	}
}

func TestLoadTellsTheFormsApartByTheFirstKey(t *testing.T) {
	for _, tc := range []struct {
		save string
		want Window
	}{
		{`{}`, Window{}},
		{` { } `, Window{}},
		{`{"1":"7/3/20/0","2":"7/3/-5/1"}`, Window{{7, 3, 20, false}, {7, 3, -5, true}}},
		{`{"7/3/-5/1":true,"7/3/20/0":true}`, Window{{7, 3, -5, true}, {7, 3, 20, false}}},
	} {
		got, err := Load([]byte(tc.save), Capacity)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("Load(%s) = %v, %v; want %v", tc.save, got, err, tc.want)
		}
	}
}

// TestLoadRejectsCorruptSaves: a corrupt or truncated save is an error that
// says what is wrong, never an empty window (which would re-open every
// replay of the player's last two matches).
func TestLoadRejectsCorruptSaves(t *testing.T) {
	good := Window{{7, 3, 20, false}, {7, 3, -5, true}, {2, 1, 0, false}}.Save()
	cases := map[string]string{
		"empty":              ``,
		"spaces":             `   `,
		"null":               `null`,
		"array literal":      `["7/3/20/0"]`,
		"number":             `4`,
		"unterminated":       `{"1":"7/3/20/0"`,
		"trailing":           `{}{}`,
		"gap in keys":        `{"1":"7/3/20/0","3":"7/3/-5/1"}`,
		"array over cap":     `{"1":"1/1/0/0","2":"1/2/0/0","3":"1/3/0/0","4":"1/4/0/0","5":"1/5/0/0"}`,
		"array repeat":       `{"1":"1/1/0/0","2":"1/1/0/0"}`,
		"array non-string":   `{"1":5}`,
		"bad signature":      `{"1":"7/3/20"}`,
		"plus sign":          `{"1":"7/3/+20/0"}`,
		"leading zero":       `{"1":"07/3/20/0"}`,
		"final 2":            `{"1":"7/3/20/2"}`,
		"legacy false":       `{"7/3/20/0":false}`,
		"legacy repeat":      `{"7/3/20/0":true,"7/3/20/0":true}`,
		"legacy bad key":     `{"7/x/20/0":true}`,
		"legacy then array":  `{"7/3/20/0":true,"1":"7/3/20/0"}`,
		"negative room":      `{"1":"-7/3/20/0"}`,
		"room overflows u32": `{"1":"4294967296/3/20/0"}`,
	}
	for i := 1; i < len(good); i++ {
		cases[fmt.Sprintf("truncated to %d bytes", i)] = string(good[:i])
	}
	for name, save := range cases {
		w, err := Load([]byte(save), Capacity)
		if err == nil {
			t.Errorf("%s: Load(%q) = %v, want an error", name, save, w)
			continue
		}
		if !errors.Is(err, ErrCorruptSave) {
			t.Errorf("%s: Load(%q) error %v does not wrap ErrCorruptSave", name, save, err)
		}
	}
}

func TestParseSignatureAcceptsExactlyStringsForm(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := Signature{rapid.Uint32().Draw(t, "room"), rapid.Uint32().Draw(t, "round"), rapid.Int64().Draw(t, "net"), rapid.Bool().Draw(t, "final")}
		got, err := ParseSignature(g.String())
		if err != nil || got != g {
			t.Fatalf("ParseSignature(%q) = %v, %v", g.String(), got, err)
		}
	})
}

func TestWindowEvictsOnlyTheOldest(t *testing.T) {
	var w Window
	sig := func(i int) Signature { return Signature{Room: 1, Round: uint32(i)} }
	for i := 1; i <= 6; i++ {
		w = w.Push(sig(i), Capacity, false)
	}
	want := Window{sig(3), sig(4), sig(5), sig(6)}
	if !slices.Equal(w, want) {
		t.Fatalf("after 6 pushes at capacity 4: %v, want %v", w, want)
	}
	w = w.Push(sig(7), Capacity, true)
	if !slices.Equal(w, Window{sig(7)}) {
		t.Fatalf("clear-on-full push into a full window: %v, want only the new signature", w)
	}
}

// FuzzLoad: whatever the bytes, Load returns a window within capacity with
// no repeated signature, or an error wrapping ErrCorruptSave; and a window
// it returns saves (array form) and loads back to itself. CI runs the seed
// corpus as a normal test; `go test -fuzz=FuzzLoad ./impls/foursig/` fuzzes.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"1":"7/3/20/0","2":"7/3/-5/1"}`))
	f.Add([]byte(`{"7/3/-5/1":true,"7/3/20/0":true,"2/1/0/0":true,"9/9/9/1":true,"1/1/1/1":true}`))
	f.Add([]byte(`{"1":"7/3/20/0"`))
	f.Add([]byte(`{"1":"7/3/20/0","3":"x"}`))
	f.Add([]byte(`{"7/3/20/0":true,"1":"7/3/20/0"}`))
	f.Add([]byte(`[]`))
	f.Add(Window{{4294967295, 2, -9223372036854775808, true}}.Save())
	f.Fuzz(func(t *testing.T, save []byte) {
		w, err := Load(save, Capacity)
		if err != nil {
			if !errors.Is(err, ErrCorruptSave) {
				t.Fatalf("Load(%q): error %v does not wrap ErrCorruptSave", save, err)
			}
			return
		}
		if len(w) > Capacity {
			t.Fatalf("Load(%q) = %d signatures, capacity %d", save, len(w), Capacity)
		}
		for i := range w {
			if slices.Contains(w[i+1:], w[i]) {
				t.Fatalf("Load(%q) = %v repeats %v", save, w, w[i])
			}
		}
		back, err := Load(w.Save(), Capacity)
		if err != nil || !slices.Equal(back, w) {
			t.Fatalf("Load(%q) = %v, which saves to %s and loads back as %v, %v", save, w, w.Save(), back, err)
		}
	})
}
