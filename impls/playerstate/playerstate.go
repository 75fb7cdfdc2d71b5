// Package playerstate is the shape every design of source document
// 001_73391d5f79abbe3d.txt shares: the dedup state is the player's own
// record, written in one atomic durable step ("claim"), and the credits
// that follow go straight to the player's balance, unkeyed (Node.Deliver
// lists the steps). The order claim-then-credit is source 000's (claim
// before grant), shared on purpose, so that what differs between the rows
// is the rule alone: a design is a Rule over its per-player state, and
// LostAfterClaim and EarlyAck derive the failures the shape gives every
// design built on it.
package playerstate

import (
	"sync"
	"time"

	"github.com/onceproof/onceproof/faults"
)

// Credit is one credit a rule asks for: settlement s into room.
type Credit struct {
	S    faults.Settlement
	Room uint32
}

// Verdict is a rule's decision on one delivery.
type Verdict struct {
	// Dup: already processed; the node acks AckDuplicate and credits nothing.
	Dup bool
	// Held: accepted but deferred (a sequence gap); the node acks AckHeld.
	Held bool
	// Credits to apply, in order (the delivered settlement and, for a rule
	// that buffers, the ones it releases).
	Credits []Credit
	// Size is how many entries the player's state holds after the decision.
	Size int
}

// Rule is a design's decision, over its per-player state S.
type Rule[S any] interface {
	// Decide judges delivery s against the player's state st (the zero S for
	// a player never seen) and updates st in place. It runs under the
	// cluster's lock, inside env.Durable. On error st must be unchanged.
	Decide(st *S, s faults.Settlement) (Verdict, error)
	// PerPlayer is the most entries the design says it keeps per player
	// (the BoundedState bound is PerPlayer x players).
	PerPlayer() int
}

// Cluster is the durable state: one S per player.
type Cluster[S any] struct {
	rule    Rule[S]
	mu      sync.Mutex
	players map[uint32]*S
}

// NewCluster returns empty durable state for rule.
func NewCluster[S any](rule Rule[S]) *Cluster[S] {
	return &Cluster[S]{rule: rule, players: make(map[uint32]*S)}
}

// Rule returns the cluster's rule.
func (c *Cluster[S]) Rule() Rule[S] { return c.rule }

// Player returns a copy of player p's state and whether it exists. For tests
// and tools, never called by a node (nodes go through env.Durable).
func (c *Cluster[S]) Player(p uint32) (S, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.players[p]
	if !ok {
		var zero S
		return zero, false
	}
	return *st, true
}

func (c *Cluster[S]) decide(s faults.Settlement) (Verdict, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.players[s.Player]
	if !ok {
		st = new(S)
	}
	v, err := c.rule.Decide(st, s)
	if err != nil {
		return Verdict{}, err
	}
	if !ok {
		c.players[s.Player] = st
	}
	return v, nil
}

// NewNode implements faults.Cluster.
func (c *Cluster[S]) NewNode(id int, env faults.Env) faults.Node {
	return &Node[S]{c: c, env: env, seen: make(map[uint32]int)}
}

// Node is one server process. It keeps nothing of its own but the state
// sizes it last saw, for the BoundedState report.
type Node[S any] struct {
	c   *Cluster[S]
	env faults.Env

	mu   sync.Mutex
	seen map[uint32]int // player -> state size after this node's last claim
}

var (
	_ faults.Node    = (*Node[int])(nil)
	_ faults.Bounded = (*Node[int])(nil)
)

// Deliver implements faults.Node: one durable step, then the credits.
//
//  1. "claim": under the record's lock, the design's Rule reads the
//     player's state and decides (duplicate, hold, or credit these), and
//     writes the state it decided on. One atomic step, so two deliveries of
//     one settlement can never both decide "new".
//  2. the credits the rule asked for, unkeyed (env.Credit with grant ""):
//     the record is the only memory of what was credited.
func (n *Node[S]) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	var v Verdict
	if err := n.env.Durable("claim", func() error {
		var err error
		v, err = n.c.decide(s)
		return err
	}); err != nil {
		return faults.Nack, err
	}
	n.mu.Lock()
	n.seen[s.Player] = v.Size
	n.mu.Unlock()
	if v.Dup {
		return faults.AckDuplicate, nil
	}
	for _, c := range v.Credits {
		if _, err := n.env.Credit("", c.S, c.Room); err != nil {
			return faults.Nack, err
		}
	}
	if v.Held {
		return faults.AckHeld, nil
	}
	return faults.AckCredited, nil
}

// StateSize implements faults.Bounded: the entries kept for the players this
// node served, as of its last claim for each (the state lives in the
// player's record; this is what the design keeps per player).
func (n *Node[S]) StateSize(time.Time) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	t := 0
	for _, k := range n.seen {
		t += k
	}
	return t
}

// StateSpan implements faults.Bounded: the bound is per player, not per ttl.
func (n *Node[S]) StateSpan() time.Duration { return 0 }

// StateBound implements faults.Bounded: PerPlayer entries per player.
func (n *Node[S]) StateBound(l faults.Load) int { return n.c.rule.PerPlayer() * l.Players }

// Design is a design built on this shape: a row name, the rule, and the
// design's declaration. seq-strict, seq-lenient and type-flags are each one
// Design value; four-sig and its mutants use the shape through
// foursig.Variant.
type Design[S any] struct {
	Row  string
	Rule Rule[S]
	Decl faults.Declaration
}

var _ faults.Declarer = Design[int]{}

// Name implements faults.Design.
func (d Design[S]) Name() string { return d.Row }

// NewCluster implements faults.Design.
func (d Design[S]) NewCluster() faults.Cluster { return NewCluster(d.Rule) }

// Declare implements faults.Declarer.
func (d Design[S]) Declare() faults.Declaration { return d.Decl }

// Lost is the verdict of a settlement dropped as a replay it is not: never
// credited (NoLoss), and acked "duplicate" (HonestAck).
var Lost = []faults.Property{faults.Properties.NoLoss, faults.Properties.HonestAck}

// LostAfterClaim derives Lost under crash, store-error and
// timeout-after-success for every design on this shape: it has no Granted
// state, keyed credit or recovery.
const LostAfterClaim = "a claim that landed with no credit after it (a crash between the two, a credit that failed, " +
	"a claim that succeeded but reported a timeout) leaves a record that every retry reads as processed: the " +
	"settlement is never credited (NoLoss) and its retries are acked \"duplicate\" (HonestAck)"

// SlowRetry derives NoDup under crash and timeout-after-success for every
// design on this shape whose record forgets: the credit landed but its ack
// was lost (a crash after it) or reported as a failure (a timeout after
// it), and the sender retries after a minute (the slow sender), two
// matches later, when forgot says the record no longer knows the
// settlement: credited again.
func SlowRetry(forgot string) string {
	return "a credit that landed and was not acked (a crash after it, a timeout after it) is retried by the slow sender " +
		"a minute later, two matches on, when " + forgot + ": credited again (NoDup)"
}

// FrozenAck derives HonestAck under pause for every design on this shape
// (wrote as for EarlyAck): the claim and the credit are two steps, and a
// call frozen between them is not overtaken by a second credit, but by
// an answer: the sender's retry, on another node, finds what the claim
// wrote and is acked "duplicate" before anything is credited.
func FrozenAck(wrote string) string {
	return "a call frozen between its claim and its credit leaves " + wrote + ", which the sender's retry on another " +
		"node finds and acks \"duplicate\" before anything is credited (HonestAck), as under concurrent"
}

// EarlyAck derives HonestAck under concurrent and in-node for every design
// on this shape; wrote says what call A's claim left in the player's
// record.
func EarlyAck(wrote string) string {
	return "the claim is one atomic step, so identical deliveries racing on several nodes (concurrent) or on one node's " +
		"concurrent calls (in-node) are never both credited; but the credit is a second step: call B's copy, claimed " +
		"between call A's claim and A's credit, finds " + wrote + " and is acked \"duplicate\" before anything is credited"
}
