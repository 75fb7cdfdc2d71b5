package lootref

import (
	"context"
	"encoding/binary"
	"errors"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot"
)

// Node is a loot design's node on ref/loot's Service. Compensating, if
// set, is true while the node runs the Service's Recover (the compensation
// job's tick, or the runner's Recover): a shortcut that re-keys
// compensation's deliveries reads it.
type Node struct {
	Svc          *loot.Service
	Compensating *atomic.Bool
}

var (
	_ lootfaults.Node      = Node{}
	_ lootfaults.Recoverer = Node{}
)

// Tokens is a cluster's source of lock tokens: a counter, so tokens are
// distinct across nodes and their incarnations and the same on every run
// of a schedule (a random token would not change what a run shows).
type Tokens struct{ n atomic.Uint64 }

// Read implements io.Reader: each 16-byte read is the next token.
func (t *Tokens) Read(p []byte) (int, error) {
	clear(p)
	binary.BigEndian.PutUint64(p[len(p)-8:], t.n.Add(1))
	return len(p), nil
}

// Config is the reference's wiring of a node on env: store (already
// reaching env, e.g. a Store), the world's lock, inventory (a
// BatchInventory) and fairness, tokens from t. A shortcut changes a field
// before loot.New.
func Config(env lootfaults.Env, store loot.Store, t *Tokens) loot.Config {
	return loot.Config{Store: store, Inventory: BatchInventory{Inventory{Env: env}}, Fairness: Fairness{Env: env}, Lock: Lock{Env: env}, Tokens: t}
}

// New builds a node on cfg.
func New(cfg loot.Config) Node {
	svc, err := loot.New(cfg)
	if err != nil {
		panic("lootref: " + err.Error()) // a design's wiring is a programming error
	}
	return Node{Svc: svc}
}

// Handle implements lootfaults.Node: the request's Service call, answered
// from its result (see Answer).
func (n Node) Handle(_ time.Time, r lootfaults.Req) (engine.Ack, error) {
	ctx := context.Background()
	no := r.Session
	switch r.Kind {
	case lootfaults.Kinds.OpenSession:
		_, err := n.Svc.Open(ctx, SpecOf(*r.Spec))
		return Answer(err)
	case lootfaults.Kinds.StartClaims:
		_, err := n.Svc.StartClaiming(ctx, no)
		return Answer(err)
	case lootfaults.Kinds.ClaimItem:
		_, err := n.Svc.Claim(ctx, loot.Caller{Player: loot.PlayerID(r.Player)}, loot.ClaimRequest{Session: no, Intent: loot.Intent(r.Intent)})
		return Answer(err)
	case lootfaults.Kinds.SettleNow:
		st, err := n.Svc.Settle(ctx, no)
		switch {
		case err != nil && st.Session.Status == loot.StatusClosed:
			return lootfaults.Recorded, nil // some deliveries are left to compensation
		case errors.Is(err, loot.ErrAlreadySettled):
			return lootfaults.Already, nil
		}
		return Answer(err)
	case lootfaults.Kinds.CancelSession:
		_, err := n.Svc.Cancel(ctx, no)
		return Answer(err)
	}
	if err := n.recover(); err != nil { // the compensation job's tick
		return engine.Nack, err
	}
	return lootfaults.Noted, nil
}

// Recover implements lootfaults.Recoverer: the Service's Recover.
func (n Node) Recover(time.Time) error { return n.recover() }

func (n Node) recover() error {
	if n.Compensating != nil {
		n.Compensating.Store(true)
		defer n.Compensating.Store(false)
	}
	_, err := n.Svc.Recover(context.Background())
	return err
}

// Answer is the answer a Service call's error gives: nil accepted; an
// unknown outcome a nack (the sender retries); a definite refusal
// refused.
func Answer(err error) (engine.Ack, error) {
	switch {
	case err == nil:
		return lootfaults.Accepted, nil
	case errors.Is(err, loot.ErrOutcomeUnknown):
		return engine.Nack, err
	}
	return lootfaults.Refused, nil
}

// SpecOf is a world session spec as ref/loot's.
func SpecOf(s lootfaults.Spec) loot.Spec {
	ms := make([]loot.PlayerID, len(s.Members))
	for i, m := range s.Members {
		ms[i] = loot.PlayerID(m)
	}
	return loot.Spec{No: s.No, Dungeon: "abyss", Loot: s.Loot, Quantity: s.Quantity, Deadline: s.Deadline, Rule: loot.RuleVersion(s.Rule), Members: ms}
}

// SessionRows is a store whose session table may hold more than one row
// under a number (a caller's table without source 004's uk_session_no, the
// business key), which the auditor must see: Read reports every row past
// the first in Record.Others. ref/loot's own stores key the session by its
// number (loot.Store's Open returns the one it has) and need not implement
// it; Read then reports one record.
type SessionRows interface {
	// SessionRows returns every session row under no, in the order the
	// table holds them, the one Session returns first; an error reads as
	// no further row.
	SessionRows(ctx context.Context, no string) ([]loot.Session, error)
}

// Read is what a ref/loot store records of session no, as the world reads
// it: the status, the claims, the grants in rank order, the snapshot, and
// from a store that has SessionRows every further row under the number, as
// Record.Others of their status alone (the claims, grants and snapshot
// belong to the number: ref/loot's tables, as source 004's, key them by
// session_no, so they are the first record's).
func Read(st loot.Reader, no string) lootfaults.Record {
	ctx := context.Background()
	sess, err := st.Session(ctx, no)
	if err != nil {
		return lootfaults.Record{}
	}
	rec := lootfaults.Record{Status: lootfaults.Status(sess.Status)}
	if sr, ok := st.(SessionRows); ok {
		if rows, err := sr.SessionRows(ctx, no); err == nil && len(rows) > 1 {
			for _, r := range rows[1:] {
				rec.Others = append(rec.Others, lootfaults.Record{Status: lootfaults.Status(r.Status)})
			}
		}
	}
	// The slices are sized up front (left nil when empty, as a Record with
	// nothing has them): the world reads every store after every call, and
	// growing them was a tenth of Read's time in a loot matrix.
	cs, _ := st.Claims(ctx, no)
	if len(cs) > 0 {
		rec.Claims = make([]lootfaults.Claim, 0, len(cs))
	}
	for _, c := range cs {
		rec.Claims = append(rec.Claims, lootfaults.Claim{Player: lootfaults.PlayerID(c.Player), Intent: lootfaults.Intent(c.Intent), At: c.At})
	}
	gs, _ := st.Grants(ctx, no)
	if len(gs) > 0 {
		rec.Granted = make([]lootfaults.PlayerID, 0, len(gs))
	}
	for _, g := range gs {
		rec.Granted = append(rec.Granted, lootfaults.PlayerID(g.Player))
	}
	if snap, err := st.Snapshot(ctx, no); err == nil {
		s := &lootfaults.Snapshot{}
		if len(snap.Claims) > 0 {
			s.Claims = make([]lootfaults.Claim, 0, len(snap.Claims))
		}
		for _, c := range snap.Claims {
			s.Claims = append(s.Claims, lootfaults.Claim{Player: lootfaults.PlayerID(c.Player), Intent: lootfaults.Intent(c.Intent), At: c.At, Fair: c.Fairness.Wins})
		}
		for _, w := range snap.Winners {
			s.Winners = append(s.Winners, lootfaults.PlayerID(w))
		}
		rec.Snapshot = s
	}
	return rec
}
