package faults

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// RunOptions tunes Run (see engine.RunOptions). The zero value is the
// default.
type RunOptions = engine.RunOptions

// opCredit is the op an env.Credit call's events carry, beside the
// designs' own durable ops and the engine's (engine.OpAck, OpRecover,
// OpRebuild, OpDeliver).
const opCredit = "credit"

// Run executes s against a fresh cluster of d and returns the history: a
// pure function of (d, s), the same history every time (RunOptions.Free
// aside). The sender is at-least-once: it resends what was not acked
// RetryAfter later, to the next node, up to MaxAttempts sends, again after
// the drain (every node's Recover, DrainAfter past the last send), then
// gives up (EvGiveUp). Faults fire at (attempt or Recover call, effect); a
// crash or panic rebuilds the node and recovers it. Same-instant sends of a
// Concurrent schedule run on one goroutine per node, interleaved as
// Switches says. Run panics on a schedule validate rejects (but for the
// uniqueness of (Player, Match, Kind), which cannot derail it).
func Run(d Design, s Schedule, opt RunOptions) History {
	if err := validateTruth(s); err != nil {
		panic("faults.Run: invalid schedule: " + err.Error())
	}
	if opt.MaxEvents == 0 {
		opt.MaxEvents = eventBudget(s)
	}
	// in-node's groups run a goroutine per send, several on one node.
	opt.InNode = slices.Contains(s.Family.Parts(), Families.InNode)
	t := engine.Run[Detail](newSystem(d, s), s.Frame, messages(len(s.Settlements)), opt)
	return History{Design: d.Name(), Schedule: s, Events: t.Events, Exhausted: t.Exhausted, Stalled: t.Stalled}
}

// eventsPerDelivery is the event budget Run gives each planned delivery of
// a schedule too large for engine.DefaultMaxEvents (long-history's deep
// one, 100,000 deliveries): an honest run makes about 8 a delivery (its
// arrival, 3 effects and a credit for a three-effect design, the answer,
// a state sample, and the odd retry), and 32 is 4 times that, so only a
// design that loops runs out, and it does so holding at most 32 x 100,000
// events (a few hundred MB) rather than the unbounded history of a loop.
const eventsPerDelivery = 32

// eventBudget is the RunOptions.MaxEvents Run uses when the caller gives
// none: the engine's default, or eventsPerDelivery a planned delivery if
// that is more.
func eventBudget(s Schedule) int {
	return max(engine.DefaultMaxEvents, eventsPerDelivery*len(s.Deliveries))
}

// messages is how the engine names n settlements: s0, s1, ...
func messages(n int) engine.Messages {
	return engine.Messages{N: n, Letter: "s", Noun: "settlement"}
}

// runInterleavings runs d on every interleaving of s's same-instant groups
// (s.Concurrent; its Switches are ignored), depth first over the
// scheduler's tree of choices, and yields each choice sequence as the
// schedule's Switches with its history (see engine.Interleavings).
func runInterleavings(d Design, s Schedule, opt RunOptions) iter.Seq2[Schedule, History] {
	return engine.Interleavings(s, frameOf, func(s Schedule, o RunOptions) History { return Run(d, s, o) }, opt)
}

func frameOf(s *Schedule) *engine.Frame { return &s.Frame }

// system is one run's settlement world: the design's cluster, the ledger
// of credits keyed by grant, and the Load inputs of BoundedState. The
// engine serializes what it touches (its Port.Apply and Record run under
// the runner's lock).
type system struct {
	cluster Cluster
	sts     []Settlement
	ledger  map[string]struct{}
	// ids maps a settlement's business identity to its ID, for the ledger.
	ids     map[settleKey]int
	nodes   []Node     // each node id's current node, for state samples
	players [][]uint32 // per node: distinct players delivered to it, for Load
	marks   []int      // per settlement: scratch stamp for distinct counting
	stamp   int
	// arrivals: the events players has read so far (AfterAttempt)
	arrivals int
	// pauses: the schedule pauses a call, so a node with a call in
	// progress is frozen (node.calls).
	pauses bool
}

// addPlayer counts player pl as delivered to node n (for Load). Players
// per node are few (3 in generated schedules): a slice.
func (sys *system) addPlayer(n int, pl uint32) {
	if !slices.Contains(sys.players[n], pl) {
		sys.players[n] = append(sys.players[n], pl)
	}
}

func newSystem(d Design, s Schedule) *system {
	n := len(s.Settlements)
	sys := &system{
		cluster: d.NewCluster(),
		sts:     s.Settlements,
		ledger:  make(map[string]struct{}, n),
		ids:     make(map[settleKey]int, n),
		nodes:   make([]Node, s.Nodes),
		players: make([][]uint32, s.Nodes),
		marks:   make([]int, n),
		pauses:  s.HasPause(),
	}
	for i, st := range s.Settlements {
		sys.ids[settleKey{st.Player, st.Match, st.Kind}] = i
	}
	return sys
}

// NewNode implements engine.System: the design's node on an env of port p.
func (sys *system) NewNode(id int, p *engine.Port[Detail]) engine.Node {
	nd := sys.cluster.NewNode(id, &env{p: p, sys: sys})
	sys.nodes[id] = nd
	n := node{n: nd, sts: sys.sts}
	if sys.pauses {
		n.calls = new(int)
	}
	if _, ok := nd.(Recoverer); ok {
		return recoverNode{n}
	}
	return n
}

// Close implements engine.Closer: a ClusterCloser's Close.
func (sys *system) Close() {
	if c, ok := sys.cluster.(ClusterCloser); ok {
		c.Close()
	}
}

// identify is the ID of the schedule's settlement with s's business
// identity, or -1 if there is none (a design credited a settlement that
// does not exist).
func (sys *system) identify(s Settlement) int {
	if id, ok := sys.ids[settleKey{s.Player, s.Match, s.Kind}]; ok {
		return id
	}
	return -1
}

// node is a design's node as the engine sees it: messages by number.
// calls (in a schedule with a pause; nil otherwise, where an in-node
// schedule has calls at once on one node by design) counts the node's
// calls in progress, which is more than one only
// while a call is paused (engine.Pause): the node is frozen then (a GC
// stall, SIGSTOP), and a delivery that reaches it goes unanswered
// (errFrozen, a nack the design never sees) until the paused call
// resumes: the sender retries it on the next node, as for the paused
// call itself. A frozen node that took the call instead would run a
// second call of a design whose node may keep a lock across its env
// calls (faults.Design allows it: a node never gets two calls at once),
// where a real process would only make it wait.
type node struct {
	n     Node
	sts   []Settlement
	calls *int
}

// errFrozen is a frozen node's answer (see node).
var errFrozen = errors.New("the node is frozen (one of its calls is paused): it answers nothing until that call resumes")

func (n node) Deliver(now time.Time, msg int) (engine.Ack, error) {
	if n.calls == nil {
		return n.n.Deliver(now, n.sts[msg])
	}
	if *n.calls > 0 {
		return Nack, errFrozen
	}
	*n.calls++
	defer func() { *n.calls-- }()
	return n.n.Deliver(now, n.sts[msg])
}

// recoverNode is the node of a Recoverer.
type recoverNode struct{ node }

func (n recoverNode) Recover(now time.Time) error { return n.n.(Recoverer).Recover(now) }

// AfterAttempt implements engine.Observer: it records a Bounded node's state
// after each attempt.
func (sys *system) AfterAttempt(p *engine.Port[Detail], _ engine.Node, a, id int, at time.Duration) {
	n := p.Node()
	b, ok := sys.nodes[n].(Bounded)
	if !ok {
		return
	}
	size, span := b.StateSize(Epoch.Add(at)), b.StateSpan()
	ev := Event{At: at, Kind: EvState, Node: n, Attempt: a, Msg: id}
	p.Record(ev, func(ev *Event, past []Event) bool {
		l := Load{Span: span}
		// Players: every player delivered to node n so far, across crashes:
		// counting the node's whole history can only raise the bound, so a
		// BoundedState failure is never an artifact of how the runner counts.
		// Read from the arrivals in the history, not from the attempts
		// sampled so far: an in-node group samples its node after all of
		// its calls, whose players its state already holds, and a call
		// paused on a node may have put its player in the node's memory
		// before it froze, its own sample coming only when it resumes.
		for ; sys.arrivals < len(past); sys.arrivals++ {
			if e := &past[sys.arrivals]; e.Kind == engine.EvArrive && e.Msg >= 0 {
				sys.addPlayer(e.Node, sys.sts[e.Msg].Player)
			}
		}
		l.Players = len(sys.players[n])
		// Recent: distinct settlements that arrived at node n in [at-span, at],
		// both ends included (again the larger count). Events are in time
		// order, so the scan stops at the first event older than the span.
		sys.stamp++
		for i := len(past) - 1; i >= 0 && past[i].At >= at-span; i-- {
			e := &past[i]
			if e.Kind == engine.EvArrive && e.Node == n && sys.marks[e.Msg] != sys.stamp {
				sys.marks[e.Msg] = sys.stamp
				l.Recent++
			}
		}
		ev.Detail = Detail{Size: size, Bound: b.StateBound(l), Load: l}
		return true
	})
}

// env is the Env of one node id, on its engine port.
type env struct {
	p   *engine.Port[Detail]
	sys *system
}

var _ Env = (*env)(nil)

// Durable implements Env.
func (e *env) Durable(op string, fn func() error) error { return e.p.Effect(op, fn) }

// Credit implements Env: the ledger applies a keyed credit once per grant.
func (e *env) Credit(grant string, s Settlement, room uint32) (bool, error) {
	applied := true
	err := e.p.Apply(opCredit, EvCredit, func(ev *Event) {
		sys := e.sys
		if grant != "" {
			if _, dup := sys.ledger[grant]; dup {
				applied = false
			} else {
				sys.ledger[grant] = struct{}{}
			}
		}
		ev.Msg = sys.identify(s)
		ev.Detail = Detail{Room: room, Amount: s.Net, Grant: grant, Applied: applied}
		if ev.Msg < 0 {
			ev.Err = fmt.Sprintf("no settlement of player %d, match %d, kind %s", s.Player, s.Match, s.Kind)
		}
	})
	if err != nil {
		return false, err
	}
	return applied, nil
}
