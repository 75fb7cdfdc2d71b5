package lootref

import (
	"context"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/ref/loot"
)

// EnvStore is a loot.Store whose every method is one Env.Store call of the
// inner store: the one atomic statement or transaction the contract asks
// for, at a fault point.
type EnvStore struct {
	Env   lootfaults.Env
	Inner loot.Store
	// Sync, if set, runs inside every call before the inner method: a real
	// database's test clock is moved there to the world's database time
	// (the in-memory store reads that clock itself). Its error fails the
	// call, as the database's own would.
	Sync func(context.Context) error
}

var _ loot.Store = EnvStore{}

// call runs f as the store call op.
func call[T any](s EnvStore, op string, f func() (T, error)) (T, error) {
	var out T
	err := s.Env.Store(op, func() error {
		if s.Sync != nil {
			if err := s.Sync(context.Background()); err != nil {
				return err
			}
		}
		var err error
		out, err = f()
		return err
	})
	return out, err
}

func (s EnvStore) Session(ctx context.Context, no string) (loot.Session, error) {
	return call(s, "read-session", func() (loot.Session, error) { return s.Inner.Session(ctx, no) })
}

func (s EnvStore) Claims(ctx context.Context, no string) ([]loot.Claim, error) {
	return call(s, "read-claims", func() ([]loot.Claim, error) { return s.Inner.Claims(ctx, no) })
}

func (s EnvStore) Grants(ctx context.Context, no string) ([]loot.Grant, error) {
	return call(s, "read-grants", func() ([]loot.Grant, error) { return s.Inner.Grants(ctx, no) })
}

func (s EnvStore) Snapshot(ctx context.Context, no string) (loot.Snapshot, error) {
	return call(s, "read-snapshot", func() (loot.Snapshot, error) { return s.Inner.Snapshot(ctx, no) })
}

type opened struct {
	s       loot.Session
	created bool
}

func (s EnvStore) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	o, err := call(s, "open", func() (opened, error) {
		sess, created, err := s.Inner.Open(ctx, spec)
		return opened{sess, created}, err
	})
	return o.s, o.created, err
}

func (s EnvStore) StartClaiming(ctx context.Context, no string) (loot.Session, error) {
	return call(s, "start", func() (loot.Session, error) { return s.Inner.StartClaiming(ctx, no) })
}

type claimed struct {
	c       loot.Claim
	created bool
}

func (s EnvStore) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	c, err := call(s, "claim", func() (claimed, error) {
		c, created, err := s.Inner.Claim(ctx, no, p, in)
		return claimed{c, created}, err
	})
	return c.c, c.created, err
}

func (s EnvStore) Cancel(ctx context.Context, no string) (loot.Session, error) {
	return call(s, "cancel", func() (loot.Session, error) { return s.Inner.Cancel(ctx, no) })
}

func (s EnvStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (loot.Frozen, error) {
	return call(s, "begin-settle", func() (loot.Frozen, error) { return s.Inner.BeginSettle(ctx, no, lease) })
}

func (s EnvStore) RecordGrants(ctx context.Context, d loot.Decision) (loot.Session, error) {
	return call(s, "record", func() (loot.Session, error) { return s.Inner.RecordGrants(ctx, d) })
}

func (s EnvStore) MarkDelivered(ctx context.Context, grantNo string) (loot.Grant, error) {
	return call(s, "mark-delivered", func() (loot.Grant, error) { return s.Inner.MarkDelivered(ctx, grantNo) })
}

func (s EnvStore) LeaseGrants(ctx context.Context, limit int, b loot.Backoff) ([]loot.Grant, error) {
	return call(s, "lease-grants", func() ([]loot.Grant, error) { return s.Inner.LeaseGrants(ctx, limit, b) })
}

func (s EnvStore) Overdue(ctx context.Context, limit int) ([]string, error) {
	return call(s, "overdue", func() ([]string, error) { return s.Inner.Overdue(ctx, limit) })
}

// EnvBatchStore is EnvStore on an inner store that marks a batch of
// grants in one call (a loot.BatchMarker: ref/loot's memory, postgres and
// mysql stores): MarkDeliveredBatch is one Env.Store call, one fault
// point, as the one statement it is in production. Wrap returns it for
// such a store, so a node takes the Service's batch path whenever its
// store has one.
type EnvBatchStore struct{ EnvStore }

var _ loot.BatchMarker = EnvBatchStore{}

// Wrap returns s, as an EnvBatchStore when its inner store is a
// loot.BatchMarker.
func (s EnvStore) Wrap() loot.Store {
	if _, ok := s.Inner.(loot.BatchMarker); ok {
		return EnvBatchStore{s}
	}
	return s
}

// MarkDeliveredBatch is the inner store's, under the op name of
// MarkDelivered: the fault families that reach a mark reach it whether a
// node marks one grant or a settle's.
func (s EnvBatchStore) MarkDeliveredBatch(ctx context.Context, nos []string) ([]loot.Grant, error) {
	return call(s.EnvStore, "mark-delivered", func() ([]loot.Grant, error) {
		return s.Inner.(loot.BatchMarker).MarkDeliveredBatch(ctx, nos)
	})
}

// Lock is the world's lock service as a loot.Lock: SET NX PX to acquire,
// the compare-and-delete script to release.
type Lock struct{ Env lootfaults.Env }

var _ loot.Lock = Lock{}

func (l Lock) Acquire(_ context.Context, key, token string, ttl time.Duration) (bool, error) {
	return l.Env.SetNX(key, token, ttl)
}

func (l Lock) Release(_ context.Context, key, token string) (bool, error) {
	return l.Env.Unlock(key, token)
}

// Inventory is the world's inventory as a loot.Inventory: a delivery keyed
// by the grant's recorded number (Key, if set, keys it otherwise: a
// shortcut that re-keys).
type Inventory struct {
	Env lootfaults.Env
	Key func(g loot.Grant) string
}

var _ loot.Inventory = Inventory{}

func (inv Inventory) Deliver(_ context.Context, g loot.Grant) error {
	key := g.No
	if inv.Key != nil {
		key = inv.Key(g)
	}
	_, err := inv.Env.Deliver(key, lootfaults.Item{Session: g.Session, Player: lootfaults.PlayerID(g.Player), Loot: g.Loot})
	return err
}

// BatchInventory is Inventory as a loot.BatchInventory: the inventory
// loot-ref's nodes take (Config), so the matrix judges the Service's
// batch path (ref/loot/delivery.go). A shortcut that swaps the inventory
// (a re-keying one) takes Inventory, one grant a call, as the source's
// designs deliver: on the batch path a DeliverBatch that times out after
// applying is redelivered at once, grant by grant under the recorded
// numbers, which repairs the one fault timeout-after-success injects
// before compensation could re-key it (compensation-new-key's declared
// failure there needs the grant left PENDING after its item landed).
type BatchInventory struct{ Inventory }

var _ loot.BatchInventory = BatchInventory{}

// DeliverBatch implements loot.BatchInventory on the world's inventory,
// which takes items one key at a time (lootfaults.Env has no batch call):
// each grant is one Deliver, in order, each its own fault point as a
// Deliver is, and the first error ends the batch with the grants before
// it applied and the rest not: a subset, as the contract allows, which
// the Service then redelivers grant by grant under the same numbers. The
// batch path is the one a settle takes whenever its Inventory has it
// (ref/loot/delivery.go), so the matrix judges that path.
func (inv BatchInventory) DeliverBatch(ctx context.Context, gs []loot.Grant) error {
	for _, g := range gs {
		if err := inv.Deliver(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// Fairness is the server's fairness record (the world's) as a
// loot.FairnessProvider.
type Fairness struct{ Env lootfaults.Env }

func (f Fairness) Fairness(_ context.Context, _ string, players []loot.PlayerID) (map[loot.PlayerID]loot.Fairness, error) {
	out := make(map[loot.PlayerID]loot.Fairness, len(players))
	for _, p := range players {
		out[p] = loot.Fairness{Wins: f.Env.Wins(lootfaults.PlayerID(p))}
	}
	return out, nil
}
