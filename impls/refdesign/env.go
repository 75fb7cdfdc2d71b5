package refdesign

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/ref"
)

// settlementOp is the ref.Op of a settlement's key. Changing it changes
// every key (they are persisted in real stores): never edit, add a new op.
const settlementOp ref.Op = 0x5e77

// KeyOf is the durable identity of s: (player, match, kind) is unique per
// settlement (faults.Settlement), so distinct settlements never share a key.
// Designs that share ref's store and sink (sharded, ristretto) use it too.
func KeyOf(s faults.Settlement) ref.Key {
	return ref.KeyOf(settlementOp, uint64(s.Player), s.Match, uint64(s.Kind))
}

// payloadLen is the encoded size of a settlement: ID 8, Player 4, Room 4,
// Match 8, Round 4, Kind 1, Net 8, Final 1, Seq 8 = 46 bytes.
const payloadLen = 46

// Payload encodes every field of s, ID included, so that Recover can hand
// the ledger the settlement it credits (the ledger attributes credits by ID;
// no design decision reads it).
func Payload(s faults.Settlement) []byte {
	b := make([]byte, 0, payloadLen)
	b = binary.BigEndian.AppendUint64(b, uint64(s.ID))
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

// SettlementOf decodes a Payload. A payload of another length is corrupt.
func SettlementOf(p []byte) (faults.Settlement, error) {
	if len(p) != payloadLen {
		return faults.Settlement{}, fmt.Errorf("refdesign: payload is %d bytes, want %d", len(p), payloadLen)
	}
	var s faults.Settlement
	s.ID = int(binary.BigEndian.Uint64(p[0:]))
	s.Player = binary.BigEndian.Uint32(p[8:])
	s.Room = binary.BigEndian.Uint32(p[12:])
	s.Match = binary.BigEndian.Uint64(p[16:])
	s.Round = binary.BigEndian.Uint32(p[24:])
	s.Kind = faults.Kind(p[28])
	s.Net = int64(binary.BigEndian.Uint64(p[29:]))
	switch p[37] {
	case 0:
	case 1:
		s.Final = true
	default:
		return faults.Settlement{}, fmt.Errorf("refdesign: payload final flag is %d, want 0 or 1", p[37])
	}
	s.Seq = binary.BigEndian.Uint64(p[38:])
	return s, nil
}

// EnvStore is a ref.PendingStore whose every call is one env.Durable
// operation on the cluster's store (a MemStore, or a real store under
// WithStore): "claim" (Begin), "commit" and "pending". The runner injects faults there; on ErrTimeout the effect
// happened and the error still reaches the Settler, which is the "outcome
// unknown" case of the ref.Store contract.
type EnvStore struct {
	env faults.Env
	st  ref.PendingStore
}

var _ ref.PendingStore = EnvStore{}

// NewEnvStore wraps mem so that every call goes through env.
func NewEnvStore(env faults.Env, mem *ref.MemStore) EnvStore { return EnvStore{env: env, st: mem} }

// NewEnvStoreOn wraps any store (SQLite, PostgreSQL, Redis) so that every
// call goes through env, exactly as NewEnvStore does for a MemStore.
func NewEnvStoreOn(env faults.Env, st ref.PendingStore) EnvStore { return EnvStore{env: env, st: st} }

// Begin implements ref.Store.
func (s EnvStore) Begin(ctx context.Context, c ref.Claim) (st ref.State, created bool, err error) {
	err = s.env.Durable("claim", func() error {
		var e error
		st, created, e = s.st.Begin(ctx, c)
		return e
	})
	return st, created, err
}

// Commit implements ref.Store.
func (s EnvStore) Commit(ctx context.Context, key ref.Key, st ref.State) error {
	return s.env.Durable("commit", func() error { return s.st.Commit(ctx, key, st) })
}

// Pending implements ref.PendingStore.
func (s EnvStore) Pending(ctx context.Context, now time.Time, limit int) (recs []ref.Record, err error) {
	err = s.env.Durable("pending", func() error {
		var e error
		recs, e = s.st.Pending(ctx, now, limit)
		return e
	})
	return recs, err
}

// EnvSink is a ref.Sink that credits through env.Credit, keyed by the grant
// key's text: the ledger applies a key once, which is the Sink contract.
type EnvSink struct{ Env faults.Env }

var _ ref.Sink = EnvSink{}

// Deliver implements ref.Sink: credit the settlement in payload to its own
// room, keyed by key.
func (k EnvSink) Deliver(_ context.Context, key ref.Key, payload []byte) error {
	s, err := SettlementOf(payload)
	if err != nil {
		return err
	}
	_, err = k.Env.Credit(key.String(), s, s.Room)
	return err
}
