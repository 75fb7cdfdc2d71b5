package faults

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/onceproof/onceproof/engine"
)

// claimThenCredit is the race of seed-verbatim in miniature: a durable claim
// (a duplicate if someone claimed before), then an unkeyed credit. Between
// node A's claim and A's credit, node B's claim finds A's record and B acks
// "duplicate" while nothing is credited yet: a dishonest ack, which only an
// interleaving that runs B inside that gap shows.
type claimThenCredit struct{}

func (claimThenCredit) Name() string        { return "claim-then-credit" }
func (claimThenCredit) NewCluster() Cluster { return &miniCluster{done: map[string]bool{}} }

// keyedFirst is a correct design under any interleaving: the credit is keyed
// (the ledger applies it once), and the "done" mark a duplicate ack relies
// on is written only after the credit, so every ack is honest and nothing is
// credited twice.
type keyedFirst struct{}

func (keyedFirst) Name() string        { return "keyed-first" }
func (keyedFirst) NewCluster() Cluster { return &miniCluster{done: map[string]bool{}, keyed: true} }

type miniCluster struct {
	mu    sync.Mutex
	done  map[string]bool
	keyed bool
}

func (c *miniCluster) NewNode(id int, e Env) Node { return &miniNode{c: c, env: e} }

type miniNode struct {
	c   *miniCluster
	env Env
}

func (n *miniNode) Deliver(now time.Time, s Settlement) (Ack, error) {
	k := fmt.Sprintf("p%d/m%d/%s", s.Player, s.Match, s.Kind)
	c := n.c
	if !c.keyed {
		var fresh bool
		if err := n.env.Durable("claim", func() error {
			c.mu.Lock()
			defer c.mu.Unlock()
			fresh = !c.done[k]
			c.done[k] = true
			return nil
		}); err != nil {
			return Nack, err
		}
		if !fresh {
			return AckDuplicate, nil
		}
		if _, err := n.env.Credit("", s, s.Room); err != nil {
			return Nack, err
		}
		return AckCredited, nil
	}
	var done bool
	if err := n.env.Durable("seen", func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		done = c.done[k]
		return nil
	}); err != nil {
		return Nack, err
	}
	if done {
		return AckDuplicate, nil
	}
	if _, err := n.env.Credit(k, s, s.Room); err != nil {
		return Nack, err
	}
	if err := n.env.Durable("mark", func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.done[k] = true
		return nil
	}); err != nil {
		return Nack, err
	}
	return AckCredited, nil
}

// race is one settlement delivered at the same instant to each of nodes
// nodes: the smallest concurrent schedule.
func race(nodes int, switches ...int) Schedule {
	s := Schedule{
		Frame:       engine.Frame{Family: Families.Concurrent, Nodes: nodes, RetryAfter: 250 * time.Millisecond, MaxAttempts: 8, Concurrent: true, Switches: switches},
		Settlements: []Settlement{{ID: 0, Player: 1, Room: 2, Match: 1, Round: 1, Kind: KindFinal, Net: -10, Final: true, Seq: 1}},
	}
	for n := range nodes {
		s.Deliveries = append(s.Deliveries, engine.Delivery{At: time.Second, Msg: 0, Node: n})
	}
	return s
}

// dishonest returns the first ack that claims a credit (credited or
// duplicate) before any credit of its settlement is in the ledger, and a
// description; or -1 and "". It also reports a settlement credited twice.
func dishonest(h History) (int, string) {
	credited := map[int]int{}
	for i, e := range h.Events {
		switch {
		case e.Kind == EvCredit && e.Detail.Applied:
			credited[e.Msg]++
			if credited[e.Msg] > 1 {
				return i, fmt.Sprintf("event %d: s%d credited twice", i, e.Msg)
			}
		case e.Kind == engine.EvAck && (e.Ack == AckCredited || e.Ack == AckDuplicate) && credited[e.Msg] == 0:
			return i, fmt.Sprintf("event %d: attempt %d acked %v for s%d with nothing credited", i, e.Attempt, e.Ack, e.Msg)
		}
	}
	return -1, ""
}

func TestInterleaveExposesTheClaimCreditRace(t *testing.T) {
	// Choice 0 starts A, 1 resumes A (its claim runs), 2 starts B (parks
	// at its claim), 3 resumes B: its claim finds A's and acks "duplicate"
	// before A's credit. Zeros run A to completion first: honest.
	s := race(2, 0, 0, 1, 1)
	h := Run(claimThenCredit{}, s, RunOptions{})
	if i, _ := dishonest(h); i < 0 {
		t.Fatalf("switches %v: want a duplicate ack before the credit, got an honest history:\n%v\n(go test ./faults -run TestInterleaveExposesTheClaimCreditRace)", s.Switches, h.Events)
	}
	// The text form carries the interleaving: the parsed file replays it.
	p, err := parse(format(s))
	if err != nil {
		t.Fatal(err)
	}
	if hp := Run(claimThenCredit{}, p, RunOptions{}); !reflect.DeepEqual(hp.Events, h.Events) {
		t.Fatalf("the parsed schedule replays differently (-want +got):\n%s", cmp.Diff(h.Events, hp.Events))
	}
	for _, zeros := range [][]int{nil, {0, 0, 0, 0, 0, 0}} {
		h := Run(claimThenCredit{}, race(2, zeros...), RunOptions{})
		if i, msg := dishonest(h); i >= 0 {
			t.Fatalf("switches %v (the sequential order): %s\n(go test ./faults -run TestInterleaveExposesTheClaimCreditRace)", zeros, msg)
		}
	}
}

// interleavings calls f with every distinct choice sequence of d on s
// (runInterleavings), and returns how many it ran.
func interleavings(d Design, s Schedule, f func([]int, History)) int {
	runs := 0
	for s, h := range runInterleavings(d, s, RunOptions{}) {
		runs++
		f(s.Switches, h)
	}
	return runs
}

func TestInterleaveEnumerationSeparatesCorrectFromRacy(t *testing.T) {
	for _, nodes := range []int{2, 3} {
		// The correct design stays clean under every interleaving. On 3
		// nodes it has 27,630 of them, seconds under -race: 2 nodes
		// exercise each of its gaps already (every gap is between two
		// nodes' effects); the racy design is enumerated on 3.
		if nodes == 2 {
			runs := interleavings(keyedFirst{}, race(nodes), func(sw []int, h History) {
				if i, msg := dishonest(h); i >= 0 {
					t.Fatalf("keyed-first, %d nodes, switches %v: %s\n(go test ./faults -run TestInterleaveEnumerationSeparatesCorrectFromRacy)", nodes, sw, msg)
				}
				if h.Exhausted {
					t.Fatalf("keyed-first, %d nodes, switches %v: exhausted", nodes, sw)
				}
			})
			// Two goroutines of 4 scheduling points each (start, seen, credit,
			// mark) interleave in at most C(8,4) = 70 ways (fewer when one
			// returns early on the other's mark).
			if runs < 2 || (nodes == 2 && runs > 70) {
				t.Fatalf("keyed-first, %d nodes: %d interleavings enumerated, want 2..70 for 2 nodes", nodes, runs)
			}
			t.Logf("%d nodes: keyed-first clean in all %d interleavings", nodes, runs)
		}
		// The racy design fails in some of its interleavings, not all.
		bad := 0
		runs := interleavings(claimThenCredit{}, race(nodes), func(sw []int, h History) {
			if i, _ := dishonest(h); i >= 0 {
				bad++
			}
		})
		if bad == 0 || bad == runs {
			t.Fatalf("claim-then-credit, %d nodes: %d of %d interleavings dishonest, want some but not all", nodes, bad, runs)
		}
		t.Logf("%d nodes: claim-then-credit dishonest in %d of %d interleavings", nodes, bad, runs)
	}
}
