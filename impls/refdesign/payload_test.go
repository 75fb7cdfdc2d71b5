package refdesign

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/faults"
)

// Every business field survives the store (the ID is the harness's, and
// stays out of durable bytes).
func TestPayloadRoundTripsEveryField(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := faults.Settlement{
			Player: rapid.Uint32().Draw(t, "player"),
			Room:   rapid.Uint32().Draw(t, "room"),
			Match:  rapid.Uint64().Draw(t, "match"),
			Round:  rapid.Uint32().Draw(t, "round"),
			Kind:   faults.Kind(rapid.Uint8().Draw(t, "kind")),
			Net:    rapid.Int64().Draw(t, "net"),
			Final:  rapid.Bool().Draw(t, "final"),
			Seq:    rapid.Uint64().Draw(t, "seq"),
		}
		got, err := SettlementOf(Payload(s))
		if err != nil || got != s {
			t.Fatalf("SettlementOf(Payload(%+v)) = %+v, %v", s, got, err)
		}
	})
}

func TestSettlementOfRejectsCorruptPayloads(t *testing.T) {
	good := Payload(faults.Settlement{ID: 3, Player: 1, Room: 2, Final: true})
	bad := append([]byte(nil), good...)
	bad[29] = 2
	for name, p := range map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-1],
		"long":      append(append([]byte(nil), good...), 0),
		"final=2":   bad,
	} {
		if _, err := SettlementOf(p); err == nil || !strings.Contains(err.Error(), "refdesign: payload") {
			t.Errorf("%s: SettlementOf = %v, want a payload error", name, err)
		}
	}
}

func TestKeyIsTheSettlementsIdentity(t *testing.T) {
	a := faults.Settlement{ID: 1, Player: 1, Room: 1, Match: 7, Round: 1, Kind: faults.KindFinal, Net: 10, Final: true, Seq: 4}
	b := a
	b.ID, b.Room, b.Round, b.Net, b.Seq = 9, 2, 3, -10, 8 // same player, match, kind
	if KeyOf(a) != KeyOf(b) {
		t.Fatal("two deliveries of one settlement (fields other than player, match, kind differ) have different keys")
	}
	c := a
	c.Kind = faults.KindInstant
	if KeyOf(a) == KeyOf(c) {
		t.Fatal("a match's instant and final share a key")
	}
}
