package loot_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestRandomSchedulesAllocateExactlyOnce runs random schedules of opens,
// claims, settles, cancels, recovers and clock moves on three nodes, with
// store and inventory calls failing before their effect or losing their
// answer, then heals the faults and lets Recover drain. Every session must
// end CLOSED with each winner's item delivered once and nobody else's, and
// a replayable audit, or CANCELED with nothing delivered.
func TestRandomSchedulesAllocateExactlyOnce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := newWorld(t)
		c := &chaos{next: func(string) fault {
			return rapid.SampledFrom([]fault{noFault, noFault, noFault, noFault, failBefore, loseAnswer}).Draw(rt, "fault")
		}}
		nodes := make([]*loot.Service, 3)
		for i := range nodes {
			nodes[i] = w.node(loot.Config{
				Store: chaosStore{w.store, c}, Inventory: chaosInventory{w.store.Inventory(), c},
				SettleLease: 10 * time.Second, Backoff: loot.Backoff{Base: time.Second, Max: 8 * time.Second},
			})
		}
		members := []loot.PlayerID{1, 2, 3, 4}
		sessions := []string{"A", "B"}
		ctx := t.Context()
		// Weighted so that a schedule of a few dozen steps often opens,
		// claims, passes the deadline, settles, and then cancels too.
		ops := []string{"open", "claim", "claim", "claim", "settle", "settle", "recover", "advance", "advance", "cancel"}
		steps := rapid.IntRange(1, 60).Draw(rt, "steps")
		for range steps {
			n := nodes[rapid.IntRange(0, len(nodes)-1).Draw(rt, "node")]
			no := rapid.SampledFrom(sessions).Draw(rt, "session")
			switch rapid.SampledFrom(ops).Draw(rt, "op") {
			case "open":
				_, _ = n.Open(ctx, loot.Spec{
					No: no, Dungeon: "D", Loot: "RING-7", Quantity: rapid.IntRange(1, 3).Draw(rt, "quantity"),
					Deadline: w.db.Now().Add(claimWindow), Rule: rapid.SampledFrom(loot.Rules()).Draw(rt, "rule"), Members: members,
				})
				_, _ = n.StartClaiming(ctx, no)
			case "claim":
				p := loot.PlayerID(rapid.IntRange(1, 5).Draw(rt, "player")) // 5 is an outsider
				in := rapid.SampledFrom([]loot.Intent{loot.Need, loot.Greed, loot.Pass}).Draw(rt, "intent")
				_, _ = n.Claim(ctx, loot.Caller{Player: p}, loot.ClaimRequest{Session: no, Intent: in})
			case "settle":
				_, _ = n.Settle(ctx, no)
			case "cancel":
				_, _ = n.Cancel(ctx, no)
			case "recover":
				_, _ = n.Recover(ctx)
			case "advance":
				w.advance(time.Duration(rapid.IntRange(1, 40).Draw(rt, "seconds")) * time.Second)
			}
		}
		// Heal: no more faults; whatever was started must finish.
		c.next = nil
		for _, no := range sessions {
			_, _ = nodes[0].StartClaiming(ctx, no) // a session left OPEN by a failed call
		}
		for range 3 {
			w.advance(time.Hour)
			if _, err := nodes[1].Recover(ctx); err != nil {
				rt.Fatalf("Recover after healing: %v", err)
			}
		}
		for _, no := range sessions {
			checkOutcome(rt, w, nodes[2], no, members)
		}
	})
}

// checkOutcome checks one session's end state.
func checkOutcome(rt *rapid.T, w *world, audit *loot.Service, no string, members []loot.PlayerID) {
	ctx := context.Background()
	sess, err := w.store.Session(ctx, no)
	if errors.Is(err, loot.ErrNotFound) {
		return // never opened
	}
	applied := func(p loot.PlayerID) int { return w.store.Applied(loot.GrantNo(no, p, "RING-7")) }
	switch sess.Status {
	case loot.StatusCanceled:
		for _, p := range append(members, 5) {
			if n := applied(p); n != 0 {
				rt.Fatalf("canceled %s delivered %d rings to %d", no, n, p)
			}
		}
	case loot.StatusClosed:
		snap, err := audit.Audit(ctx, no)
		if err != nil {
			rt.Fatalf("Audit(%s): %v", no, err)
		}
		if len(snap.Winners) > sess.Quantity {
			rt.Fatalf("%s: %d winners for %d items", no, len(snap.Winners), sess.Quantity)
		}
		for _, p := range append(members, 5) {
			want := 0
			if slices.Contains(snap.Winners, p) {
				want = 1
			}
			if n := applied(p); n != want {
				rt.Fatalf("%s: %d got %d rings, want %d (winners %v)", no, p, n, want, snap.Winners)
			}
		}
		gs, _ := w.store.Grants(ctx, no)
		for _, g := range gs {
			if g.Status != loot.GrantSuccess {
				rt.Fatalf("%s: grant %s still %s after the drain", no, g.No, g.Status)
			}
		}
	default:
		rt.Fatalf("%s ended %s, want CLOSED or CANCELED (%s)", no, sess.Status, fmt.Sprint(sess))
	}
}
