package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

// lootd -inventory against the inventory service mode hosts: every fault
// the inventory can play on a delivery, on -dev and on both stores, and a
// settler killed with its grants recorded and undelivered.

// startInventory starts service mode's inventory for t.
func startInventory(t *testing.T) *inventory.Server {
	t.Helper()
	inv, err := inventory.Start(inventory.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inv.Close() })
	return inv
}

// claimWinners claims for session no on the nodes in turn: 1001 and 1003
// NEED, 1002 GREED, 1004 PASS, so 1001 and 1003 win a quantity of 2
// whatever their wins (priority ranks first).
func (c *cluster) claimWinners(nodes []*node, no string) {
	c.t.Helper()
	for i, p := range members {
		intent := map[int64]string{1001: "NEED", 1002: "GREED", 1003: "NEED", 1004: "PASS"}[p]
		if st, out := c.claim(nodes[i%len(nodes)], p, no, intent); st != 200 {
			c.t.Fatalf("claim of %d: %d %v", p, st, out)
		}
	}
}

// checkWinsFromGrants settles session no, of one item, between 1001,
// who won sessions before, and 1002, who won none, both NEED and 1001
// first: wins come from the delivered grants, not from the store's own
// inventory (empty with -inventory), so 1002 wins. Counted from the
// empty table, 1001 would, by its earlier claim.
func (c *cluster) checkWinsFromGrants(n *node, no string) {
	c.t.Helper()
	deadline := c.open(n, e2eSpec(no, 1, 2))
	for _, p := range []int64{1001, 1002} {
		if st, out := c.claim(n, p, no, "NEED"); st != 200 {
			c.t.Fatalf("claim of %d: %d %v", p, st, out)
		}
	}
	sleepUntil(deadline)
	if gs := grantsOf(c.waitDelivered(n, no, 20*time.Second)); len(gs) != 1 || gs[0]["playerId"] != 1002.0 {
		c.t.Errorf("%s granted %v, want 1002 (no wins) over 1001 (wins before); reproduce: go test ./cmd/lootd -run '^%s$'", no, gs, strings.Split(c.t.Name(), "/")[0])
	}
}

// checkInventoryOnce checks that the inventory saw session s's grants
// (s as GET /api/loot/sessions/{no} answers, delivered) and nothing else
// of it: 1001 and 1003 won, each grant number applied exactly once, its
// first delivery faulted with f, and every redelivery under the same
// number.
func checkInventoryOnce(t *testing.T, inv *inventory.Server, s map[string]any, f inventory.Fault) {
	t.Helper()
	no := s["sessionNo"].(string)
	repro := fmt.Sprintf("reproduce: go test ./cmd/lootd -run '^%s$'", strings.Split(t.Name(), "/")[0])
	winners := map[string]bool{}
	for _, g := range grantsOf(s) {
		winners[g["grantNo"].(string)] = true
	}
	if len(winners) != 2 || !winners[no+":1001:SWORD_001"] || !winners[no+":1003:SWORD_001"] {
		t.Errorf("session %s granted %v, want 1001 and 1003; %s", no, grantsOf(s), repro)
	}
	applied := map[string]int{}
	seen := map[string][]inventory.Delivery{}
	for _, d := range inv.Deliveries() {
		if d.Session != no {
			continue
		}
		if !winners[d.Key] {
			t.Errorf("the inventory got %+v: not a grant of %s; %s", d, no, repro)
		}
		seen[d.Key] = append(seen[d.Key], d)
		if d.Outcome == inventory.Applied {
			applied[d.Key]++
		}
	}
	for key := range winners {
		ds := seen[key]
		t.Logf("grant %s: %d deliveries (first with fault %q), %d applied", key, len(ds), f, applied[key])
		switch {
		case applied[key] != 1:
			t.Errorf("grant %s applied %d times, want 1: %+v; %s", key, applied[key], ds, repro)
		case ds[0].Fault != f:
			t.Errorf("grant %s's first delivery had fault %q, want %q: %+v; %s", key, ds[0].Fault, f, ds, repro)
		case f != inventory.None && len(ds) < 2:
			t.Errorf("grant %s delivered %d times under %s, want a redelivery: %+v; %s", key, len(ds), f, ds, repro)
		}
	}
}

// TestE2EInventoryGetsEachWinnerOnceUnderEveryFault runs lootd -dev
// -inventory and settles one session per inventory fault (none, then
// each of inventory.Faults on every grant's first delivery): the
// settler's retries, with the grant number as the key, land each winner's
// item exactly once, and every grant ends SUCCESS; then wins are
// counted from the delivered grants.
func TestE2EInventoryGetsEachWinnerOnceUnderEveryFault(t *testing.T) {
	inv := startInventory(t)
	// -lock-ttl 10s: each delivery attempt gets 10s/15 = 667 ms
	// (inventoryOptions), a margin for a loaded machine; the held reply
	// of TimeoutAfterApply outlasts it (inventory.DefaultHold, 30 s).
	n := startNode(t, "dev", []string{"-dev", "-player-header", "X-Player-Id", "-inventory", inv.URL(),
		"-settle-every", "100ms", "-compensate-every", "200ms", "-lock-ttl", "10s"}, nil)
	c := &cluster{t: t, client: &http.Client{Timeout: 30 * time.Second}}
	for _, f := range append([]inventory.Fault{inventory.None}, inventory.Faults...) {
		no := "INV-" + strings.ToUpper(string(f))
		if f == inventory.None {
			no = "INV-NONE"
		}
		inv.SetPlan(inventory.Table{First: f}.Plan())
		deadline := c.open(n, e2eSpec(no, 2, 2))
		c.claimWinners([]*node{n}, no)
		sleepUntil(deadline)
		checkInventoryOnce(t, inv, c.waitDelivered(n, no, 20*time.Second), f)
	}

	inv.SetPlan(nil)
	c.checkWinsFromGrants(n, "INV-FAIR")
}

// TestE2EInventoryAfterASettlerIsKilled runs three lootd -inventory on
// each store: a session whose first deliveries time out after applying
// is finished by its settler's retries; a session whose settler is
// killed just after recording its grants is delivered by the survivors'
// compensation, whose first deliveries lose their replies, then again
// under the same numbers. Each winner lands once in the HTTP inventory
// and none in the store's own table, and wins are counted from the
// delivered grants.
func TestE2EInventoryAfterASettlerIsKilled(t *testing.T) {
	forEachStore(t, func(t *testing.T, store string) {
		inv := startInventory(t)
		c := startCluster(t, clusterOpts{store: store, nodes: 3, settleEvery: 100 * time.Millisecond, compensate: 200 * time.Millisecond,
			lockTTL: 3 * time.Second, hold: "record:INVK-", args: []string{"-inventory", inv.URL()}})

		inv.SetPlan(inventory.Table{First: inventory.TimeoutAfterApply}.Plan())
		const timed = "INVT-1"
		deadline := c.open(c.nodes[0], e2eSpec(timed, 2, 2))
		c.claimWinners(c.nodes, timed)
		sleepUntil(deadline)
		checkInventoryOnce(t, inv, c.waitDelivered(c.nodes[1], timed, 20*time.Second), inventory.TimeoutAfterApply)

		inv.SetPlan(inventory.Table{First: inventory.LoseReply}.Plan())
		const killed = "INVK-1"
		deadline = c.open(c.nodes[0], e2eSpec(killed, 2, 2))
		c.claimWinners(c.nodes, killed)
		sleepUntil(deadline)
		holder := waitHold(t, c.nodes, "record", killed)
		holder.kill9(t)
		var live *node
		for _, n := range c.nodes {
			if n != holder {
				live = n
			}
		}
		s := c.waitDelivered(live, killed, 30*time.Second)
		for _, g := range grantsOf(s) {
			if g["attempts"].(float64) < 1 {
				t.Errorf("grant %v delivered without a compensation lease", g)
			}
		}
		checkInventoryOnce(t, inv, s, inventory.LoseReply)
		inv.SetPlan(nil)
		c.checkWinsFromGrants(live, "INVF-1")
		if n := c.count("SELECT COUNT(*) FROM loot_inventory"); n != 0 {
			t.Errorf("the store's own inventory holds %d items; with -inventory it must hold none", n)
		}
		if n := c.count("SELECT COUNT(*) FROM loot_grant WHERE status <> 'SUCCESS'"); n != 0 {
			t.Errorf("%d grants not SUCCESS", n)
		}
	})
}

// TestE2EInventoryPartitionedFromLootdIsCompensatedAfterTheHeal puts a
// netfault proxy between lootd -dev and its inventory and partitions it
// (refusing, then hanging) across a session's settle: the settler's
// deliveries fail, the grants stay PENDING while the partition lasts, and
// after the heal compensation lands each winner once under its number.
func TestE2EInventoryPartitionedFromLootdIsCompensatedAfterTheHeal(t *testing.T) {
	inv := startInventory(t)
	nf, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nf.Close)
	upstream := strings.TrimPrefix(strings.TrimSuffix(inv.URL(), inventory.Path), "http://")
	px, err := nf.Proxy("inventory", upstream)
	if err != nil {
		t.Fatal(err)
	}
	n := startNode(t, "dev", []string{"-dev", "-player-header", "X-Player-Id", "-inventory", "http://" + px.Addr() + inventory.Path,
		"-settle-every", "100ms", "-compensate-every", "200ms", "-lock-ttl", "3s"}, nil)
	c := &cluster{t: t, client: &http.Client{Timeout: 30 * time.Second}}
	repro := fmt.Sprintf("reproduce: go test ./cmd/lootd -run '^%s$'", t.Name())
	for _, mode := range []netfault.Partition{netfault.Refuse, netfault.Hang} {
		no := "INVP-" + strings.ToUpper(string(mode))
		deadline := c.open(n, e2eSpec(no, 2, 2))
		c.claimWinners([]*node{n}, no)
		if err := px.Partition(mode); err != nil {
			t.Fatal(err)
		}
		sleepUntil(deadline)
		// The settle ran and recorded its grants; their deliveries
		// cannot pass while the partition lasts.
		n.waitLog(t, 20*time.Second, map[string]string{"msg": "settled", "session": no})
		s := c.session(n, no)
		for _, g := range grantsOf(s) {
			if g["status"] != "PENDING" {
				t.Errorf("%s under a %s partition: grant %v, want PENDING; %s", no, mode, g, repro)
			}
		}
		if err := px.Heal(); err != nil {
			t.Fatal(err)
		}
		checkInventoryOnce(t, inv, c.waitDelivered(n, no, 30*time.Second), inventory.None)
	}
	var ops []string
	for _, e := range nf.Events() {
		ops = append(ops, e.Op+" "+e.Kind)
	}
	if got := strings.Join(ops, ", "); got != "partition refuse, heal , partition hang, heal " {
		t.Errorf("the proxy recorded %q; %s", got, repro)
	}
}
