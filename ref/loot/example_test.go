package loot_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
)

// A team of three rolls for one ring: claims (a retry, an outsider, a late
// one), a settle before and after the deadline, delivery, and the audit.
// Every deadline is judged by the store's clock, db.
func Example() {
	ctx := context.Background()
	db := memory.NewClock(time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC))
	store := memory.NewStore(db.Now)
	history := memory.NewHistory()
	// 1001 is new (seeded at the server average, 1.5 wins); 1002 has won
	// the ring once.
	history.Set("RING-7", 1001, loot.Fairness{SeedMilli: 1500})
	history.Set("RING-7", 1002, loot.Fairness{Wins: 1})
	svc, err := loot.New(loot.Config{
		Store: store, Inventory: store.Inventory(), Fairness: history, Lock: memory.NewLock(db.Now),
	})
	if err != nil {
		panic(err)
	}

	_, err = svc.Open(ctx, loot.Spec{
		No: "S-42", Dungeon: "ABYSS-3", Loot: "RING-7", Quantity: 1,
		Deadline: db.Now().Add(30 * time.Second), Rule: loot.RuleSeeded,
		Members: []loot.PlayerID{1001, 1002, 1003},
	})
	fmt.Println("open:", err)
	_, err = svc.StartClaiming(ctx, "S-42")
	fmt.Println("start claiming:", err)

	claim := func(p loot.PlayerID, in loot.Intent) error {
		_, err := svc.Claim(ctx, loot.Caller{Player: p}, loot.ClaimRequest{Session: "S-42", Intent: in})
		return err
	}
	fmt.Println("claims:", claim(1001, loot.Need), claim(1002, loot.Need), claim(1003, loot.Pass))
	fmt.Println("a retry:", claim(1001, loot.Need)) // still one claim
	fmt.Println("an outsider:", errors.Is(claim(2001, loot.Need), loot.ErrNotMember))

	_, err = svc.Settle(ctx, "S-42")
	fmt.Println("settle early:", errors.Is(err, loot.ErrNotDue))

	db.Advance(30 * time.Second)
	fmt.Println("claim at the deadline:", errors.Is(claim(1003, loot.Greed), loot.ErrClaimsClosed))

	st, err := svc.Settle(ctx, "S-42")
	fmt.Println("settle:", err, st.Session.Status)
	for _, g := range st.Grants {
		fmt.Println("grant:", g.No, g.Status)
	}
	_, err = svc.Settle(ctx, "S-42")
	fmt.Println("settle again:", errors.Is(err, loot.ErrAlreadySettled))

	snap, err := svc.Audit(ctx, "S-42")
	fmt.Printf("audit: %v, rule %s, %d members, %d claims (%d effective), winners %v\n",
		err, snap.Rule, len(snap.Members), len(snap.Claims), snap.Effective(), snap.Winners)
	fmt.Println("rings held by 1002:", store.Holding(1002, "RING-7"))
	// Output:
	// open: <nil>
	// start claiming: <nil>
	// claims: <nil> <nil> <nil>
	// a retry: <nil>
	// an outsider: true
	// settle early: true
	// claim at the deadline: true
	// settle: <nil> CLOSED
	// grant: S-42:1002:RING-7 SUCCESS
	// settle again: true
	// audit: <nil>, rule v2-seeded, 3 members, 3 claims (2 effective), winners [1002]
	// rings held by 1002: 1
}
