package inventory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/httpinventory"
)

// The client lootd -inventory uses, against this server under each
// fault: what the two sides of the protocol do together.

// settlerGrant is a grant as the settler delivers it (no compensation
// lease taken yet).
func settlerGrant() loot.Grant {
	return loot.Grant{No: loot.GrantNo("S7", 1001, "SWORD"), Session: "S7", Player: 1001, Loot: "SWORD", Quantity: 1, Rank: 1, Status: loot.GrantPending}
}

func client(t *testing.T, url string, attempts int) *httpinventory.Client {
	t.Helper()
	// 300 ms is the client's whole view of a held reply: the server
	// holds TimeoutAfterApply for DefaultHold (30 s) unless the client
	// hangs up first, so the client's timeout, not a race, decides.
	c, err := httpinventory.New(httpinventory.Options{URL: url, Timeout: 300 * time.Millisecond, Attempts: attempts, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// TestClientRedeliversEveryFaultWithTheSameKeyAndTheItemLandsOnce: each
// fault on the first delivery is ridden over by the client's retries,
// with the grant number as the key every time, and the inventory holds
// the item once. A client of one attempt reports the outcome unknown
// (the fault is real: without the retry the grant would wait for
// compensation).
func TestClientRedeliversEveryFaultWithTheSameKeyAndTheItemLandsOnce(t *testing.T) {
	for _, f := range inventory.Faults {
		t.Run(string(f), func(t *testing.T) {
			g := settlerGrant()
			s := start(t, inventory.Table{First: f}.Plan())
			if err := client(t, s.URL(), 3).Deliver(t.Context(), g); err != nil {
				t.Fatalf("Deliver under %s: %v, want nil after a retry; %s", f, err, repro(t))
			}
			ds := s.Deliveries()
			applied := 0
			for _, d := range ds {
				if d.Key != g.No || d.Player != int64(g.Player) || d.Loot != g.Loot || d.Session != g.Session {
					t.Errorf("delivery %+v is not grant %s under its own number; %s", d, g.No, repro(t))
				}
				if d.Outcome == inventory.Applied {
					applied++
				}
			}
			if len(ds) < 2 || ds[0].Fault != f || applied != 1 {
				t.Errorf("ledger %v: want the faulted delivery, a redelivery, and the item applied once; %s", outcomes(ds), repro(t))
			}

			once := start(t, inventory.Table{First: f}.Plan())
			if err := client(t, once.URL(), 1).Deliver(t.Context(), g); err == nil {
				t.Errorf("a one-attempt client answered nil under %s: the fault did not bite; %s", f, repro(t))
			}
		})
	}
}

// TestClientTriesACompensationDeliveryOnce: a grant under a compensation
// lease (Attempts > 0) gets one attempt, its lease being its backoff; a
// later pass's delivery, with the same number, lands it once.
func TestClientTriesACompensationDeliveryOnce(t *testing.T) {
	g := settlerGrant()
	g.Attempts = 1
	s := start(t, inventory.Table{First: inventory.Fail}.Plan())
	c := client(t, s.URL(), 3)
	if err := c.Deliver(t.Context(), g); err == nil {
		t.Fatalf("Deliver answered nil to a 503; %s", repro(t))
	}
	if n := len(s.Deliveries()); n != 1 {
		t.Errorf("compensation delivery tried %d times, want 1; %s", n, repro(t))
	}
	g.Attempts = 2
	if err := c.Deliver(t.Context(), g); err != nil {
		t.Fatalf("next pass: %v; %s", err, repro(t))
	}
	if got := outcomes(s.Deliveries()); len(got) != 2 || got[1] != g.No+" applied 200" {
		t.Errorf("ledger %v, want the failed delivery then the applied one; %s", got, repro(t))
	}
}

// TestClientGivesUpWhenTheCallerDoes: a settle cut short (its context
// ended) stops retrying at once and says so.
func TestClientGivesUpWhenTheCallerDoes(t *testing.T) {
	s := start(t, func(int, string, int) inventory.Fault { return inventory.Fail })
	c, err := httpinventory.New(httpinventory.Options{URL: s.URL(), Attempts: 1000, Backoff: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		for len(s.Deliveries()) == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	err = c.Deliver(ctx, settlerGrant())
	if !errors.Is(err, context.Canceled) || len(s.Deliveries()) != 1 {
		t.Errorf("Deliver with its context cancelled during the backoff: %v after %d deliveries, want the context's error after 1; %s", err, len(s.Deliveries()), repro(t))
	}
}
