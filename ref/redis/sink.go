package redis

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/onceproof/onceproof/ref"
	goredis "github.com/redis/go-redis/v9"
)

// Sink is a ref.Sink in the store's Redis: SET NX on a grant key
// (prefix+"g:"+hex(key)) decides, in the same script, whether the effect
// happens, and the effect is appending the grant to a ledger list
// (prefix+"ledger"). The script also moves the claim to Delivered, so the
// credit, its grant key and the claim's state change in one atomic step.
type Sink struct{ s *Store }

var _ ref.CommittingSink = (*Sink)(nil)

// Sink returns the store's Sink.
func (s *Store) Sink() *Sink { return &Sink{s: s} }

// Deliver implements ref.Sink.
func (k *Sink) Deliver(ctx context.Context, key ref.Key, payload []byte) error {
	s := k.s
	if err := s.check(ctx, "deliver"); err != nil {
		return err
	}
	m := member(key)
	keys := []string{s.prefix + "g:" + m, s.prefix + "ledger", s.claimKey(m), s.pending}
	if err := deliverScript.Run(ctx, s.rdb, keys, payload, m).Err(); err != nil {
		return s.wrap(fmt.Sprintf("deliver %v", key), err)
	}
	return nil
}

// CommitsRecord implements ref.CommittingSink: Deliver moves the claim to
// Delivered in the script that applies the grant, so a Settler built on
// this sink's Store skips its own Commit.
func (k *Sink) CommitsRecord() bool { return true }

// Grant is one ledger entry.
type Grant struct {
	Key     ref.Key
	Payload []byte
}

// Ledger returns every grant applied, in the order applied. Each key
// appears at most once: a key listed twice would be a double credit.
func (k *Sink) Ledger(ctx context.Context) ([]Grant, error) {
	vals, err := k.s.rdb.LRange(ctx, k.s.prefix+"ledger", 0, -1).Result()
	if err != nil {
		return nil, k.s.wrap("ledger", err)
	}
	out := make([]Grant, 0, len(vals))
	for _, v := range vals {
		// Each entry is the key's 32 hex digits followed by the payload.
		if len(v) < 32 {
			return nil, fmt.Errorf("redis: ledger: %w: entry of %d bytes", ErrReply, len(v))
		}
		kb, err := hex.DecodeString(v[:32])
		if err != nil {
			return nil, fmt.Errorf("redis: ledger: %w: %v", ErrReply, err)
		}
		out = append(out, Grant{Key: ref.KeyFromBytes([16]byte(kb)), Payload: []byte(v[32:])})
	}
	return out, nil
}

// Applied reports whether key's grant was applied, and with which payload.
func (k *Sink) Applied(ctx context.Context, key ref.Key) ([]byte, bool, error) {
	v, err := k.s.rdb.Get(ctx, k.s.prefix+"g:"+member(key)).Result()
	if errors.Is(err, goredis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, k.s.wrap("applied", err)
	}
	return []byte(v), true, nil
}
