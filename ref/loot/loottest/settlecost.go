package loottest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// SettleCost is what RunSettleCost needs of a store under test.
type SettleCost struct {
	// Store is the store under test; Base is its clock when RunSettleCost
	// starts, and Advance moves that clock on.
	Store   loot.Store
	Base    time.Time
	Advance func(time.Duration)
	// Count is how much the store has cost so far in Unit (round trips,
	// packets sent: whatever one round trip is on its database).
	Count func() int64
	Unit  string
	// Refused is the most a call that writes nothing (a refusal or a
	// repeat) may cost: 1 where the read that explains it rides with the
	// write, 2 where it is a statement of its own after the write.
	Refused int64
	// Inventory, if set, is the store's own inventory: its Deliver, like
	// MarkDelivered, costs exactly one Unit per grant, first or repeated,
	// and a loot.BatchInventory's DeliverBatch (like a loot.BatchMarker
	// store's MarkDeliveredBatch) one Unit per batch. With it a settle
	// through delivery by the Service is checked against its budget (see
	// DeliverBudget).
	Inventory loot.Inventory
	// Reproduce is the command that runs the calling test alone.
	Reproduce string
	_         struct{}
}

// RunSettleCost takes a session from CLAIMING through its settle to CLOSED
// with its grants PENDING, and a second one to CANCELED, and checks that
// every status change that takes effect (StartClaiming, BeginSettle,
// RecordGrants, Cancel) costs exactly one Unit, so that a settle costs two;
// that every refusal and repeat on the way (a settle before the deadline,
// under a live lease, of a closed or an unknown session; a repeated record,
// a stale fence) costs at most c.Refused; that delivering each grant
// (c.Inventory's Deliver, then MarkDelivered) costs one Unit a call, a
// repeat too; and that each call still gets the answer loot.Store
// documents.
func RunSettleCost(t *testing.T, c SettleCost) {
	t.Helper()
	const lease = time.Minute
	ctx := t.Context()
	// cost calls call, checks its answer is want and its cost 1..most,
	// and returns the cost.
	cost := func(what string, most int64, call func() error, want error) int64 {
		t.Helper()
		before := c.Count()
		err := call()
		n := c.Count() - before
		if n < 1 || n > most {
			t.Errorf("%s cost %d %s, want 1..%d", what, n, c.Unit, most)
		}
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			t.Errorf("%s = %v, want %v", what, err, want)
		}
		return n
	}
	spec := loot.Spec{No: "COST-1", Dungeon: "D", Loot: "L", Quantity: 2, Deadline: c.Base.Add(time.Minute),
		Rule: loot.RuleCount, Members: []loot.PlayerID{1, 2, 3}}
	for _, no := range []string{spec.No, "COST-2", "COST-3"} {
		spec.No = no
		if _, _, err := c.Store.Open(ctx, spec); err != nil {
			t.Fatalf("Open(%s): %v", no, err)
		}
		cost("StartClaiming of an OPEN session", 1, func() error {
			s, err := c.Store.StartClaiming(ctx, no)
			if err == nil && s.Status != loot.StatusClaiming {
				err = errors.New("session " + string(s.Status))
			}
			return err
		}, nil)
	}
	for _, no := range []string{"COST-1", "COST-3"} {
		for p := range loot.PlayerID(3) {
			if _, _, err := c.Store.Claim(ctx, no, p+1, loot.Need); err != nil {
				t.Fatalf("Claim of %s by %d: %v", no, p+1, err)
			}
		}
	}
	begin := func(no string) (loot.Frozen, error) { return c.Store.BeginSettle(ctx, no, lease) }
	cost("BeginSettle before the deadline", c.Refused, func() error { _, err := begin("COST-1"); return err }, loot.ErrNotDue)
	c.Advance(time.Minute)
	var fz loot.Frozen
	settle := cost("BeginSettle that wins", 1, func() (err error) {
		fz, err = begin("COST-1")
		if err == nil && (fz.Session.Status != loot.StatusSettling || len(fz.Claims) != 3) {
			err = errors.New("not SETTLING with the 3 claims frozen")
		}
		return err
	}, nil)
	cost("BeginSettle under a live lease", c.Refused, func() error { _, err := begin("COST-1"); return err }, loot.ErrAlreadySettling)
	fair := map[loot.PlayerID]loot.Fairness{1: {}, 2: {}, 3: {}}
	d, err := loot.Decide(fz, fair, lease)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	record := func(d loot.Decision) error {
		s, err := c.Store.RecordGrants(ctx, d)
		if err == nil && s.Status != loot.StatusClosed {
			err = errors.New("session " + string(s.Status))
		}
		return err
	}
	settle += cost("RecordGrants that closes", 1, func() error { return record(d) }, nil)
	if settle != 2 {
		t.Errorf("a settle to CLOSED cost %d %s, want 2", settle, c.Unit)
	}
	if gs, err := c.Store.Grants(ctx, "COST-1"); err != nil || len(gs) != 2 || gs[0].Status != loot.GrantPending || gs[1].Status != loot.GrantPending {
		t.Errorf("Grants after the settle = %+v, %v; want 2 PENDING", gs, err)
	}
	gs, _ := c.Store.Grants(ctx, "COST-1")
	for _, g := range gs {
		for _, again := range []string{"", " repeated"} {
			if c.Inventory != nil {
				cost("Deliver of "+g.No+again, 1, func() error { return c.Inventory.Deliver(ctx, g) }, nil)
			}
			cost("MarkDelivered of "+g.No+again, 1, func() error {
				m, err := c.Store.MarkDelivered(ctx, g.No)
				if err == nil && m.Status != loot.GrantSuccess {
					err = errors.New("grant " + string(m.Status))
				}
				return err
			}, nil)
		}
	}
	if c.Inventory != nil {
		if bi, isBI := c.Inventory.(loot.BatchInventory); isBI {
			cost("DeliverBatch of COST-1's grants, repeated", 1, func() error { return bi.DeliverBatch(ctx, gs) }, nil)
		}
		budget := DeliverBudget(c.Store, c.Inventory, spec.Quantity)
		svc, err := loot.New(loot.Config{Store: c.Store, Inventory: c.Inventory, Fairness: noHistory{}, SettleLease: lease})
		if err != nil {
			t.Fatalf("loot.New: %v", err)
		}
		cost("Service.Settle through delivery", budget, func() error {
			st, err := svc.Settle(ctx, "COST-3")
			if err == nil && (st.Session.Status != loot.StatusClosed || st.Delivered != spec.Quantity) {
				err = fmt.Errorf("session %s, %d of %d delivered", st.Session.Status, st.Delivered, spec.Quantity)
			}
			return err
		}, nil)
	}
	cost("MarkDelivered of no grant", 1, func() error { _, err := c.Store.MarkDelivered(ctx, "COST-404"); return err }, loot.ErrNotFound)
	cost("RecordGrants repeated", c.Refused, func() error { return record(d) }, nil)
	stale := d
	stale.Fence++
	cost("RecordGrants by a stale fence", c.Refused, func() error { return record(stale) }, loot.ErrStaleFence)
	cost("BeginSettle of a CLOSED session", c.Refused, func() error { _, err := begin("COST-1"); return err }, loot.ErrAlreadySettled)
	cost("BeginSettle of no session", c.Refused, func() error { _, err := begin("COST-404"); return err }, loot.ErrNotFound)
	cost("Cancel of a CLAIMING session", 1, func() error { _, err := c.Store.Cancel(ctx, "COST-2"); return err }, nil)
	cost("Cancel repeated", c.Refused, func() error { _, err := c.Store.Cancel(ctx, "COST-2"); return err }, nil)
	if t.Failed() {
		t.Log("to reproduce: " + c.Reproduce)
	}
}

// DeliverBudget is the most a Service's Settle (no Lock) of a session of
// quantity grants may cost through delivery, on store s with its own
// inventory inv: BeginSettle 1 (the CAS and the frozen claims) +
// RecordGrants 1 (close, grants, snapshot) = 2 to CLOSED, then the
// delivery: one DeliverBatch (ledger rows and SUCCESS, one statement) if
// inv is a loot.BatchInventory, else one Deliver per grant; and one
// MarkDeliveredBatch (the grants as recorded, for the attempt counts) if s
// is a loot.BatchMarker, else one MarkDelivered per grant. On PostgreSQL
// and memory, which have both: 2 + 2 = 4, whatever the quantity. It is the
// most, not the count: PostgreSQL answers the MarkDeliveredBatch after its
// own DeliverBatch from the rows that statement returned (3 in all).
func DeliverBudget(s loot.Store, inv loot.Inventory, quantity int) int64 {
	deliver, mark := int64(quantity), int64(quantity)
	if _, ok := inv.(loot.BatchInventory); ok {
		deliver = 1
	}
	if _, ok := s.(loot.BatchMarker); ok {
		mark = 1
	}
	return 2 + deliver + mark
}
