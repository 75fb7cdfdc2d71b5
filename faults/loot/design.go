package lootfaults

import (
	"time"

	"github.com/onceproof/onceproof/engine"
)

// Design is a way to allocate loot: the thing the harness judges. Its
// Cluster is the durable state (its own database, read through Read),
// shared by its nodes, which share no memory. A design's duties: touch the
// world only through the node's Env, from inside Handle or Recover on the
// calling goroutine (every store call in Env.Store, every lock call and
// delivery through Env); read times from the clocks it is given (the
// database's for its store, Env.Now for the node's); never hold a Cluster
// lock across an Env call; make the Cluster safe for concurrent use; treat
// Env's errors as a real service's (engine.ErrInjected: nothing
// happened; engine.ErrTimeout: it happened). Optional: engine.Declarer,
// Recoverer, ClusterCloser for a Cluster on a real database, and
// LockCluster for one that brings a real lock service.
type Design interface {
	Name() string
	// NewCluster returns fresh durable state whose store judges time by db,
	// the database's clock.
	NewCluster(db Clock) Cluster
}

// Clock is a clock a design is given: the database's (NewCluster).
type Clock interface {
	Now() time.Time
}

// Cluster is one run's durable state.
type Cluster interface {
	// NewNode builds a node with empty memory on the cluster's durable
	// state; the runner calls it at the start for each node id and after
	// a crash.
	NewNode(id int, env Env) Node
	// Read is what the design's database says of session no now, as an
	// auditor with read access sees it (it is not an Env call and never
	// fails): the world reads it after every store call and judges the
	// allocation by it. It reports every record the database holds under
	// the number, a second one in Record.Others: an auditor's SELECT
	// returns every row, not the first.
	Read(no string) Record
}

// ClusterCloser is a Cluster that holds resources beyond memory (a
// database schema, connections). Run calls Close once, after the run's
// last event, so a design on a real database gets fresh durable state per
// run without leaking it. Close reports no error to the runner: a run's
// verdict does not depend on cleanup, so a design that must surface a
// cleanup failure keeps it and reports it its own way.
type ClusterCloser interface {
	Cluster
	Close()
}

// Node handles requests.
type Node interface {
	// Handle handles one arrival of r at virtual time now (the node's
	// clock). An error is a Nack: the sender retries.
	Handle(now time.Time, r Req) (engine.Ack, error)
}

// Recoverer is a Node that recovers: the runner calls Recover on a node it
// built to replace a crashed one and on every node when the schedule
// drains (an hour past everything: every lease has ended). Loot designs
// settle what is overdue and deliver what is pending there.
type Recoverer interface {
	Recover(now time.Time) error
}

// Req is a request as a node receives it.
type Req struct {
	Kind Kind
	// Session is the session's number ("" for Compensate).
	Session string
	// Spec is the session's definition, on OpenSession.
	Spec *Spec
	// Player is the claim's caller, as authentication established it;
	// Intent its claim; Fair the fairness score the client sends in the
	// request body (the server's record: honest clients), which source
	// 004's code reads and the reference ignores.
	Player PlayerID
	Intent Intent
	Fair   int64
}

// Spec is what opening a session records.
type Spec struct {
	No       string
	Loot     string
	Quantity int
	// Deadline is by the database's clock.
	Deadline time.Time
	// Rule is the ranking rule's version: "v1", source 004's (priority
	// desc, wins asc, claim time asc).
	Rule    string
	Members []PlayerID
}

// The answers a node gives (engine.Acks; Nack is an error, retried).
const (
	// Accepted: the request took effect now, durably (a session opened or
	// started, a claim recorded, a session canceled; a settle whose result
	// is recorded and every item delivered).
	Accepted engine.Ack = 1
	// Already: it had taken effect before (a duplicate), durably.
	Already engine.Ack = 2
	// Refused: a definite no; nothing happened (not a member, claims
	// closed, not due, canceled, settled, another settler has it).
	Refused engine.Ack = 3
	// Noted: acknowledged with no claim about the outcome (source 004's
	// "settle triggered").
	Noted engine.Ack = 4
	// Recorded: a settle's result is recorded (CLOSED); some items are
	// still to be delivered (by compensation).
	Recorded engine.Ack = 5
)

// answerName names an answer.
func answerName(a engine.Ack) string {
	switch a {
	case engine.Nack:
		return "nack"
	case Accepted:
		return "accepted"
	case Already:
		return "already"
	case Refused:
		return "refused"
	case Noted:
		return "noted"
	case Recorded:
		return "recorded"
	}
	return "answer?"
}

// Env is the world as one node sees it. Every method but Now and Wins is a
// fault point: it may fail before it runs (engine.ErrInjected), run and
// report a timeout (engine.ErrTimeout), crash the node before or after it,
// or stall the node before it (a pause).
type Env interface {
	// Now is this node's clock: the database's plus the node's skew.
	Now() time.Time
	// Store runs fn as one call of the design's own database named op:
	// one atomic statement or transaction (the runner never interleaves
	// inside it). fn reads the database's clock from the Cluster's Clock.
	Store(op string, fn func() error) error
	// The lock service (Redis), whose ttls run on its own clock: SetNX is
	// SET key token NX PX ttl; Get returns the key's token ("" if none or
	// expired); Del deletes the key; Unlock deletes it only if it holds
	// token, in one step (the compare-and-delete script).
	SetNX(key, token string, ttl time.Duration) (bool, error)
	Get(key string) (string, error)
	Del(key string) error
	Unlock(key, token string) (bool, error)
	// Deliver puts it into its player's inventory once per key: a key
	// already applied is a no-op (applied false).
	Deliver(key string, it Item) (applied bool, err error)
	// Wins is the server's fairness record of p.
	Wins(p PlayerID) int64
}

// Item is one item delivered: a session's loot to a player.
type Item struct {
	Session string
	Player  PlayerID
	Loot    string
}

// Record is what a design's database says of one session.
type Record struct {
	// Status is "" (None) for a session the database does not have.
	Status Status
	// Claims are the session's claim rows, sorted by player.
	Claims []Claim
	// Granted are the players with a grant row, in rank order.
	Granted []PlayerID
	// Snapshot is the audit record of the result, nil if the design keeps
	// none.
	Snapshot *Snapshot
	// Others are the further records the database holds under the same
	// session number, beyond this one, in the order it holds them (what
	// an auditor's SELECT ... WHERE session_no = ? returns past its first
	// row), each as a Record with no Others of its own; nil when it holds
	// one. Source 004 keys the session by its number (uk_session_no, "业务
	// 唯一键"), so a database that writes a second record on a repeated
	// open or start (a second session of one drop, which a second settle
	// can allocate again) is caught by ForwardOnly. A design whose
	// claims, grants or snapshot belong to the number rather than to a
	// record (source 004's loot_intent and loot_grant rows are keyed by
	// session_no) reports them on the first record only.
	Others []Record
}

// Claim is one claim row as the design stores it: the player, the
// intent, the claim time and the fairness score it will rank by.
type Claim struct {
	Player PlayerID
	Intent Intent
	At     time.Time
	Fair   int64
}

// Snapshot is a design's audit record of a result: the claims it ranked
// (with the fairness it read) and the winners, in rank order.
type Snapshot struct {
	Claims  []Claim
	Winners []PlayerID
}
