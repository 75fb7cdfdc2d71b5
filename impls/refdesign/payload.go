package refdesign

import (
	"encoding/binary"
	"fmt"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/ref"
)

// settlementOp is the ref.Op of a settlement's key. Changing it changes
// every key (they are persisted in real stores): never edit, add a new op.
const settlementOp ref.Op = 0x5e77

// KeyOf is the durable identity of s: (player, match, kind) is unique per
// settlement, so distinct settlements never share a key.
func KeyOf(s faults.Settlement) ref.Key {
	return ref.KeyOf(settlementOp, uint64(s.Player), s.Match, uint64(s.Kind))
}

// payloadLen is the encoded size of a settlement: Player 4, Room 4, Match 8,
// Round 4, Kind 1, Net 8, Final 1, Seq 8 = 38 bytes. The harness's ID is not
// in it: the ledger attributes a credit by (Player, Match, Kind).
const payloadLen = 38

// Payload encodes every business field of s, so that Recover can credit
// the settlement from the store's record alone.
func Payload(s faults.Settlement) []byte {
	b := make([]byte, 0, payloadLen)
	b = binary.BigEndian.AppendUint32(b, s.Player)
	b = binary.BigEndian.AppendUint32(b, s.Room)
	b = binary.BigEndian.AppendUint64(b, s.Match)
	b = binary.BigEndian.AppendUint32(b, s.Round)
	b = append(b, byte(s.Kind))
	b = binary.BigEndian.AppendUint64(b, uint64(s.Net))
	fin := byte(0)
	if s.Final {
		fin = 1
	}
	b = append(b, fin)
	return binary.BigEndian.AppendUint64(b, s.Seq)
}

// SettlementOf decodes a Payload (its ID is 0). A payload of another length
// or a final flag other than 0 or 1 is corrupt.
func SettlementOf(p []byte) (faults.Settlement, error) {
	if len(p) != payloadLen {
		return faults.Settlement{}, fmt.Errorf("refdesign: payload is %d bytes, want %d", len(p), payloadLen)
	}
	var s faults.Settlement
	s.Player = binary.BigEndian.Uint32(p[0:])
	s.Room = binary.BigEndian.Uint32(p[4:])
	s.Match = binary.BigEndian.Uint64(p[8:])
	s.Round = binary.BigEndian.Uint32(p[16:])
	s.Kind = faults.Kind(p[20])
	s.Net = int64(binary.BigEndian.Uint64(p[21:]))
	switch p[29] {
	case 0:
	case 1:
		s.Final = true
	default:
		return faults.Settlement{}, fmt.Errorf("refdesign: payload final flag is %d, want 0 or 1", p[29])
	}
	s.Seq = binary.BigEndian.Uint64(p[30:])
	return s, nil
}
