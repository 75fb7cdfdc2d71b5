package foursig

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/onceproof/onceproof/faults"
)

// Signature is the content signature of source document 001 section 5
// ("签名等于房间、轮次、净额、终局四元"): computed from the settlement alone
// by every node, with no counter to synchronise. Each field guards against
// one confusion: Room against crediting across rooms (串房), Round against
// confusing adjacent matches (跨局), Net and Final against two settlements of
// the same match and round (同局同轮多笔互串).
type Signature struct {
	Room  uint32
	Round uint32
	Net   int64
	Final bool
}

// Fields selects which of the four fields a signature keeps. The mutants
// four-sig-no-room, -no-net and -no-final drop one each.
type Fields uint8

const (
	FieldRoom Fields = 1 << iota
	FieldRound
	FieldNet
	FieldFinal

	// AllFields is the signature of the source document.
	AllFields = FieldRoom | FieldRound | FieldNet | FieldFinal
)

// SignatureOf returns s's signature over the fields f keeps; a dropped field
// is zero, so settlements differing only there share a signature.
func SignatureOf(s faults.Settlement, f Fields) Signature {
	var g Signature
	if f&FieldRoom != 0 {
		g.Room = s.Room
	}
	if f&FieldRound != 0 {
		g.Round = s.Round
	}
	if f&FieldNet != 0 {
		g.Net = s.Net
	}
	if f&FieldFinal != 0 {
		g.Final = s.Final
	}
	return g
}

// String is the signature's text form in a save: "room/round/net/final",
// final as 0 or 1, e.g. "7/3/-20/1". It is canonical: ParseSignature accepts
// exactly the strings String produces.
func (g Signature) String() string {
	b := make([]byte, 0, 32)
	b = strconv.AppendUint(b, uint64(g.Room), 10)
	b = append(b, '/')
	b = strconv.AppendUint(b, uint64(g.Round), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, g.Net, 10)
	if g.Final {
		b = append(b, "/1"...)
	} else {
		b = append(b, "/0"...)
	}
	return string(b)
}

// less orders signatures by (Round, Room, Net, Final): the order the legacy
// migration puts a map's signatures in (see loadLegacy).
func (g Signature) less(h Signature) bool {
	switch {
	case g.Round != h.Round:
		return g.Round < h.Round
	case g.Room != h.Room:
		return g.Room < h.Room
	case g.Net != h.Net:
		return g.Net < h.Net
	}
	return !g.Final && h.Final
}

// ParseSignature parses String's form. Anything else (a missing field, a
// sign on an unsigned field, "+5", "007", a final flag other than 0 or 1) is
// an error: two spellings of one signature would let a save hold it twice.
func ParseSignature(text string) (Signature, error) {
	parts := strings.Split(text, "/")
	if len(parts) != 4 {
		return Signature{}, fmt.Errorf("foursig: signature %q: want room/round/net/final, got %d fields", text, len(parts))
	}
	room, err1 := strconv.ParseUint(parts[0], 10, 32)
	round, err2 := strconv.ParseUint(parts[1], 10, 32)
	net, err3 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || (parts[3] != "0" && parts[3] != "1") {
		return Signature{}, fmt.Errorf("foursig: signature %q: want unsigned room and round, signed net, final 0 or 1", text)
	}
	g := Signature{Room: uint32(room), Round: uint32(round), Net: net, Final: parts[3] == "1"}
	if g.String() != text {
		return Signature{}, fmt.Errorf("foursig: signature %q is not canonical (want %q)", text, g.String())
	}
	return g, nil
}
