package faults

import "time"

// Design is a way to settle: the thing the harness judges. Its Cluster is
// the durable state, shared by its nodes, which share no memory. A design's
// duties: touch the world only through the node's Env, from inside Deliver
// or Recover on the calling goroutine; never hold a Cluster lock across an
// Env call (a crash unwinds through it; the watchdog ends a run that blocks);
// never read Settlement.ID; make the Cluster safe for concurrent use (one
// Node never gets two calls at once); treat Env's errors as a real store's
// (engine.ErrInjected: nothing happened; engine.ErrTimeout: it happened). Optional:
// Declarer, Recoverer, Bounded.
type Design interface {
	// Name is the design's row name in the matrix (e.g. "ref").
	Name() string
	// NewCluster returns fresh durable state: an empty store, no records.
	NewCluster() Cluster
}

// Cluster is one run's durable state. It outlives node crashes.
type Cluster interface {
	// NewNode builds a node with empty memory on the cluster's durable state.
	// The runner calls it at the start for each node id and again after a
	// crash (then calls Recover if the node has it). env is how the node
	// touches the world: every durable read or write goes through
	// env.Durable and every credit through env.Credit, so that the runner can
	// inject faults there.
	NewNode(id int, env Env) Node
}

// ClusterCloser is a Cluster that holds resources beyond memory (a database
// table, a file, connections). Run calls Close once, after the run's last
// event, so a design on a real store gets fresh durable state per run
// without leaking it. Close reports no error to the runner: the run's
// verdict does not depend on cleanup, so a design that must surface a
// cleanup failure keeps it and reports it its own way.
type ClusterCloser interface {
	Cluster
	Close()
}

// Node receives deliveries.
type Node interface {
	// Deliver handles one arrival of s at virtual time now. An error is a
	// Nack: the sender retries. Deliver must not hold a lock of the Cluster
	// across an env call: a crash is injected there and the node is dropped.
	Deliver(now time.Time, s Settlement) (Ack, error)
}

// Env is the world as one node sees it. The runner implements it; it is safe
// for concurrent use in the concurrent family.
type Env interface {
	// Durable runs fn as one durable operation named op ("claim", "commit",
	// "save", ...). The runner may fail it before fn runs (an error wrapping
	// engine.ErrInjected), run fn and then report an error wrapping
	// engine.ErrTimeout (the effect happened, the caller cannot know), or crash the node just before
	// or just after fn. fn is the design's own code on its Cluster's state,
	// and it must be what one store call is in production: one atomic round
	// trip (one statement, one transaction, one script). The runner never
	// interleaves inside fn, so a read-then-write fn that is atomic here but
	// two statements on a real store hides its race from every family;
	// ref/storetest's concurrent-Begin check is where such a store fails.
	// An fn that only reads names its op with Read (see History.Reached).
	Durable(op string, fn func() error) error
	// Credit applies s.Net to s's player's balance in room. The ledger
	// attributes the credit by the settlement's business identity (Player,
	// Match, Kind: unique in a schedule), never by s.ID, so a design may
	// rebuild s from its own durable bytes; it records s.Net and room as
	// given, and a property checks them. grant is the idempotency key of the
	// credit: a keyed credit whose grant is already in the ledger is a no-op
	// returning applied=false. An empty grant is an unkeyed credit: it always
	// applies (a design with no idempotent sink credits this way). Faults as
	// for Durable.
	Credit(grant string, s Settlement, room uint32) (applied bool, err error)
}

// Recoverer is a Node that recovers after a crash. The runner calls Recover
// on a node it built to replace a crashed one, before its first delivery, and
// on every node when the schedule drains (with now far past every lease).
type Recoverer interface {
	Recover(now time.Time) error
}

// Load is what a node has been asked to remember, for BoundedState.
type Load struct {
	Players int           // distinct players delivered to the node so far
	Recent  int           // distinct settlements delivered to the node in the trailing Span
	Span    time.Duration // the span Recent counts over (the node's declared ttl)
}

// Bounded is a Node that reports the memory it keeps, for BoundedState.
type Bounded interface {
	// StateSize is how many entries the node keeps in memory at now (for
	// a window: the entries that would still answer a lookup).
	StateSize(now time.Time) int
	// StateSpan is the ttl the node's bound is stated over (0 if none).
	StateSpan() time.Duration
	// StateBound is the most entries the node may keep under load l: rate x
	// ttl for a TTL window (l.Recent), k x l.Players for a design that
	// keeps k entries per player.
	StateBound(l Load) int
}
