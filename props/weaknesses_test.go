package props

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/faults/faultstest"
)

// The designs below are each a correct design with one thing wrong, the
// things a kit that passes plainly wrong designs used to let through: each
// test shows the kit now fails it, and would not without the feature it
// names.

// tiny is a correct design with knobs that break it one way each. A node
// claims the settlement's durable key, credits under the grant key, commits;
// Recover completes claimed records.
type tiny struct {
	name string
	// key is the durable (and grant) key of a settlement (default: player,
	// match, kind).
	key func(faults.Settlement) string
	// amount is what a credit moves (default: the net).
	amount func(faults.Settlement) int64
	// recoverUnkeyed: Recover credits without the grant key.
	recoverUnkeyed bool
	// nackAfterRestart: a node built after a crash nacks everything.
	nackAfterRestart bool
	// capPerPlayer > 0: the store keeps only a player's last capPerPlayer
	// records (older ones are forgotten).
	capPerPlayer int
	// unkeyed: credits carry no grant key, so the store is the only memory
	// of what was credited.
	unkeyed bool
	// hoard: the node keeps every key it settled in memory and reports it
	// as its state, never evicting.
	hoard bool
	// bounded: the node implements faults.Bounded (with hoard, or an
	// empty memory).
	bounded bool
}

func (d tiny) Name() string { return d.name }
func (d tiny) NewCluster() faults.Cluster {
	return &tinyCluster{d: d, state: map[string]int{}, pending: map[string]faults.Settlement{}, built: map[int]bool{}}
}

type tinyCluster struct {
	d       tiny
	mu      sync.Mutex
	state   map[string]int // 1 claimed, 2 delivered
	pending map[string]faults.Settlement
	order   map[uint32][]string // per player, keys in claim order (capPerPlayer)
	built   map[int]bool
}

func (c *tinyCluster) NewNode(id int, env faults.Env) faults.Node {
	c.mu.Lock()
	restarted := c.built[id]
	c.built[id] = true
	c.mu.Unlock()
	n := &tinyNode{c: c, env: env, restarted: restarted}
	if c.d.bounded {
		return boundedTiny{n}
	}
	return n
}

type tinyNode struct {
	c         *tinyCluster
	env       faults.Env
	restarted bool
	mu        sync.Mutex
	memory    map[string]bool
}

type boundedTiny struct{ *tinyNode }

func (b boundedTiny) StateSize(time.Time) int      { b.mu.Lock(); defer b.mu.Unlock(); return len(b.memory) }
func (b boundedTiny) StateSpan() time.Duration     { return faults.WindowTTL }
func (b boundedTiny) StateBound(l faults.Load) int { return l.Recent }

func (n *tinyNode) keyOf(s faults.Settlement) string {
	if n.c.d.key != nil {
		return n.c.d.key(s)
	}
	return fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind)
}

func (n *tinyNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	if n.c.d.nackAfterRestart && n.restarted {
		return faults.Nack, nil
	}
	k := n.keyOf(s)
	var st int
	if err := n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		if st = n.c.state[k]; st == 0 {
			n.c.state[k] = 1
			n.c.pending[k] = s
			n.c.remember(s.Player, k)
		}
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	if st == 2 {
		return faults.AckDuplicate, nil
	}
	if err := n.complete(k, s, !n.c.d.unkeyed); err != nil {
		return faults.Nack, err
	}
	if n.c.d.hoard {
		n.mu.Lock()
		if n.memory == nil {
			n.memory = map[string]bool{}
		}
		n.memory[k] = true
		n.mu.Unlock()
	}
	return faults.AckCredited, nil
}

// remember applies capPerPlayer: the store forgets a player's oldest
// record once it holds more (c.mu held).
func (c *tinyCluster) remember(player uint32, k string) {
	if c.d.capPerPlayer == 0 {
		return
	}
	if c.order == nil {
		c.order = map[uint32][]string{}
	}
	c.order[player] = append(c.order[player], k)
	if len(c.order[player]) > c.d.capPerPlayer {
		old := c.order[player][0]
		c.order[player] = c.order[player][1:]
		delete(c.state, old)
		delete(c.pending, old)
	}
}

func (n *tinyNode) complete(k string, s faults.Settlement, keyed bool) error {
	grant := k
	if !keyed {
		grant = ""
	}
	c := s
	if n.c.d.amount != nil {
		c.Net = n.c.d.amount(s)
	}
	if _, err := n.env.Credit(grant, c, s.Room); err != nil {
		return err
	}
	return n.env.Durable("commit", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		if _, ok := n.c.state[k]; ok {
			n.c.state[k] = 2
		}
		delete(n.c.pending, k)
		return nil
	})
}

func (n *tinyNode) Recover(now time.Time) error {
	n.c.mu.Lock()
	var keys []string
	for k := range n.c.pending {
		keys = append(keys, k)
	}
	n.c.mu.Unlock()
	slices.Sort(keys)
	for _, k := range keys {
		n.c.mu.Lock()
		s, ok := n.c.pending[k]
		n.c.mu.Unlock()
		if ok {
			if err := n.complete(k, s, !n.c.d.recoverUnkeyed && !n.c.d.unkeyed); err != nil {
				return err
			}
		}
	}
	return nil
}

// judge runs d's cell of family f as the kit does (DefaultMatrixN
// schedules, or the whole small scope).
func judge(t *testing.T, d faults.Design, f faults.Family) Cell {
	t.Helper()
	return engine.Check(World, d, MatrixOptions{Families: []faults.Family{f}}).Cells[0]
}

func wantFails(t *testing.T, c Cell, p faults.Property, without string) {
	t.Helper()
	if !slices.Contains(c.Failed, p) {
		t.Errorf("%s under %s: %s, want it to fail %s (without %s it passed)", c.Design, c.Family, c.Text(), p, without)
	}
}

func TestKitFailsANodeThatNacksForeverAfterARestart(t *testing.T) {
	c := judge(t, tiny{name: "nacks-after-restart", nackAfterRestart: true}, faults.Families.Crash)
	wantFails(t, c, faults.Properties.NoLoss, "the sender giving up after the drain: the runs were 'unknown'")
	if c.Unknown > 0 {
		t.Errorf("%d runs unknown: the sender giving up is the world's end, not the harness's budget", c.Unknown)
	}
}

func TestKitFailsADesignThatPanics(t *testing.T) {
	c := judge(t, faultstest.PanicsOnDebit{}, faults.Families.Clean)
	wantFails(t, c, faults.Properties.Responsive, "the Responsive property: a panic was handled like a crash")
	v, _ := c.Counterexamples[0].Report.Verdict(faults.Properties.Responsive)
	if a := v.Anomalies[0].Explain; !containsAll(a, "cannot settle a debit", "faultstest.panicsNode.Deliver") {
		t.Errorf("the anomaly %q does not show the panic value and the design's frame", a)
	}
}

func TestKitFailsARecoverThatCreditsWithoutTheGrantKey(t *testing.T) {
	c := judge(t, tiny{name: "recover-unkeyed", recoverUnkeyed: true}, faults.Families.Crash)
	wantFails(t, c, faults.Properties.NoDup, "senders that give up or retry past the lease: Recover never did real work")
	if c.Coverage["recover-credit"] == 0 {
		t.Errorf("no run had Recover credit anything: %s", c.Coverage.Format(faults.World.Reached))
	}
}

func TestKitFailsAKeyThatDropsThePlayer(t *testing.T) {
	d := tiny{name: "key-without-player", key: func(s faults.Settlement) string { return fmt.Sprintf("%d/%d", s.Match, s.Kind) }}
	wantFails(t, judge(t, d, faults.Families.WideIDs), faults.Properties.NoLoss, "wide-ids: no two players shared a match")
}

func TestKitFailsAKeyThatKeeps16BitsOfAnID(t *testing.T) {
	d := tiny{name: "key-16-bits", key: func(s faults.Settlement) string {
		return fmt.Sprintf("%d/%d/%d", s.Player&0xffff, s.Match&0xffff, s.Kind)
	}}
	wantFails(t, judge(t, d, faults.Families.WideIDs), faults.Properties.NoLoss, "wide-ids: ids were 1..15")
}

func TestKitFailsADebitPaidAsACredit(t *testing.T) {
	d := tiny{name: "debit-as-credit", amount: func(s faults.Settlement) int64 { return max(s.Net, -s.Net) }}
	wantFails(t, judge(t, d, faults.Families.Clean), faults.Properties.ExactAmount, "the ledger recording amounts")
}

func TestKitFailsAStoreThatForgetsOldRecords(t *testing.T) {
	// The store is the only memory of what was credited (unkeyed credits):
	// without the cap the long history holds, with it a far replay is
	// credited again.
	if c := judge(t, tiny{name: "store-only", unkeyed: true}, faults.Families.LongHistory); !c.Holds() {
		t.Fatalf("the uncapped store under long-history: %s; want holds (the control)", c.Text())
	}
	d := tiny{name: "store-caps-64", unkeyed: true, capPerPlayer: 64}
	wantFails(t, judge(t, d, faults.Families.LongHistory), faults.Properties.NoDup, "long-history: a player had 15 settlements")
}

func TestKitFailsAWindowThatNeverEvicts(t *testing.T) {
	d := tiny{name: "hoards", hoard: true, bounded: true}
	wantFails(t, judge(t, d, faults.Families.LongHistory), faults.Properties.BoundedState, "long-history and a bound without slack")
}

func TestKitSaysNotJudgedForADesignWithoutStateReports(t *testing.T) {
	c := judge(t, tiny{name: "unbounded-report", hoard: true}, faults.Families.LongHistory)
	if c.NotJudgedBy[faults.Properties.BoundedState] != c.Runs || slices.Contains(c.Failed, faults.Properties.BoundedState) {
		t.Errorf("BoundedState not judged in %d of %d runs; want all (the design reports no state: not 'held')", c.NotJudgedBy[faults.Properties.BoundedState], c.Runs)
	}
}

// A design that answers without touching the world gives the store-error
// family nothing to fail: the cell says so and fails, rather than holding.
func TestKitFailsACellThatNeverExercisedItsFamily(t *testing.T) {
	c := judge(t, acksBlindly{}, faults.Families.StoreError)
	if !slices.Contains(c.Unexercised, "fail") || !c.Mismatch() {
		t.Errorf("store-error on a design with no effects: %s; want 'not exercised' and a disagreement", c.Text())
	}
}

// The small scope runs every schedule of its scope: a design wrong in one
// corner of it fails there, and one right everywhere holds "all N".
func TestKitHoldsExhaustivelyOrFindsTheCorner(t *testing.T) {
	ok := judge(t, keyed, faults.Families.SmallScope)
	if !ok.Holds() || ok.Scope == "" || ok.Runs < 30000 {
		t.Errorf("keyed under small-scope: %s over %d runs (scope %q); want holds: all of them", ok.Text(), ok.Runs, ok.Scope)
	}
	bad := judge(t, tiny{name: "recover-unkeyed", recoverUnkeyed: true}, faults.Families.SmallScope)
	wantFails(t, bad, faults.Properties.NoDup, "the exhaustive scope")
}

// acksBlindly touches nothing, not even the ledger: it acks "credited" at
// once (HonestAck and NoLoss fail it too).
type acksBlindly struct{}

func (acksBlindly) Name() string               { return "acks-blindly" }
func (acksBlindly) NewCluster() faults.Cluster { return acksBlindly{} }
func (acksBlindly) NewNode(int, faults.Env) faults.Node {
	return acksBlindlyNode{}
}

type acksBlindlyNode struct{}

func (acksBlindlyNode) Deliver(time.Time, faults.Settlement) (faults.Ack, error) {
	return faults.AckCredited, nil
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
