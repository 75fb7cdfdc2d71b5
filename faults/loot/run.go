package lootfaults

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// Op names of the world's own services, in events.
const (
	opLockSet = "lock-set"
	opLockGet = "lock-get"
	opLockDel = "lock-del"
	opUnlock  = "unlock"
	opDeliver = "deliver"
)

// Run executes s against a fresh cluster of d and returns the history: a
// pure function of (d, s), the same history every time (RunOptions.Free
// aside). Requests are sent at least once (engine.Run: retries round robin,
// a drain with every node's Recover an hour past the last send, resends,
// give-ups); each node sees its own clock, the design's store the
// database's, the lock service its own. Run panics on a schedule validate
// rejects.
func Run(d Design, s Schedule, opt engine.RunOptions) History {
	if err := validateTruth(s); err != nil {
		panic("lootfaults.Run: invalid schedule: " + err.Error())
	}
	sys := newSystem(d, s)
	t := engine.Run[Detail](sys, s.Frame, messagesOf(s), opt)
	return History{Design: d.Name(), Schedule: s, Events: t.Events, Exhausted: t.Exhausted, Stalled: t.Stalled}
}

// messagesOf is how the engine names s's requests: r0, r1, ...
func messagesOf(s Schedule) engine.Messages {
	return engine.Messages{N: len(s.Requests), Letter: "r", Noun: "request"}
}

// system is one run of the loot world: the design's cluster, the clocks,
// the lock service, the inventory ledger and the last record seen of each
// session. The engine serializes what its Port.Apply and Record run; the
// database clock is an atomic (concurrent groups run at one instant).
type system struct {
	s       Schedule
	cluster Cluster
	dbNow   atomic.Int64 // virtual time of the latest call, for the database's clock
	locks   LockService  // memLocks, or the cluster's own (LockCluster)
	ledger  map[string]bool
	seen    []Record // per session: the record last recorded in an Events.View event
	frozen  []bool   // per session: whether a record of it was seen SETTLING or CLOSED (its Bumps applied)
	// wins is the fairness record's change since the run started, per
	// player (Schedule.CountWins, Session.Bumps); winsMu guards it, since
	// Wins is no fault point and a design reads it from any goroutine.
	winsMu sync.Mutex
	wins   map[PlayerID]int64
}

func newSystem(d Design, s Schedule) *system {
	sys := &system{s: s, locks: memLocks{}, ledger: map[string]bool{}, seen: make([]Record, len(s.Sessions)), frozen: make([]bool, len(s.Sessions)), wins: map[PlayerID]int64{}}
	sys.cluster = d.NewCluster(dbClock{sys})
	if lc, ok := sys.cluster.(LockCluster); ok {
		if l := lc.LockService(); l != nil {
			sys.locks = l
		}
	}
	return sys
}

// dbClock is the database's clock: the virtual time of the call running.
type dbClock struct{ sys *system }

func (c dbClock) Now() time.Time { return engine.Epoch.Add(time.Duration(c.sys.dbNow.Load())) }

// NewNode implements engine.System.
func (sys *system) NewNode(id int, p *engine.Port[Detail]) engine.Node {
	e := &env{p: p, sys: sys}
	p.Observe(e.observe)
	nd := sys.cluster.NewNode(id, e)
	n := node{n: nd, sys: sys, skew: sys.s.Skew(id)}
	if _, ok := nd.(Recoverer); ok {
		return recoverNode{n}
	}
	return n
}

// node is a design's node as the engine sees it.
type node struct {
	n    Node
	sys  *system
	skew time.Duration
}

func (n node) Deliver(now time.Time, msg int) (engine.Ack, error) {
	n.sys.dbNow.Store(int64(now.Sub(engine.Epoch)))
	return n.n.Handle(now.Add(n.skew), n.sys.req(msg))
}

type recoverNode struct{ node }

func (n recoverNode) Recover(now time.Time) error {
	n.sys.dbNow.Store(int64(now.Sub(engine.Epoch)))
	return n.n.(Recoverer).Recover(now.Add(n.skew))
}

// req is request msg as a node receives it.
func (sys *system) req(msg int) Req {
	r := sys.s.Requests[msg]
	q := Req{Kind: r.Kind, Player: r.Player, Intent: r.Intent}
	if r.Session < 0 {
		return q
	}
	sess := sys.s.Sessions[r.Session]
	q.Session = sess.No()
	switch r.Kind {
	case Kinds.OpenSession:
		q.Spec = &Spec{No: sess.No(), Loot: sess.Loot(), Quantity: sess.Quantity, Deadline: engine.Epoch.Add(sess.Deadline),
			Rule: "v1", Members: slices.Clone(sys.s.TeamOf(r.Session))}
	case Kinds.ClaimItem:
		q.Fair = sys.winsOf(r.Player)
	}
	return q
}

// Drains implements engine.Drainer: the compensation job runs every hour
// after the schedule, twice: a pass a crash cut short after it leased a
// grant leaves it to the next one, as a periodic job does. While an outage
// (store-error's, outage) fails calls the engine runs more passes, until
// two in a row fail none: compensation an outage cut short finishes, after
// as many hourly runs as it takes (engine.Outage).
func (sys *system) Drains() int { return 2 }

// The dependencies an outage can take down (engine.Outage.Dep): the
// design's store (every Env.Store call, engine.DepStore), the lock service
// (every lock call) and the inventory (every delivery).
const (
	depLock      = "lock"
	depInventory = "inventory"
)

// Dependency implements engine.Dependent: the lock calls are the lock
// service's, a delivery the inventory's.
func (sys *system) Dependency(op string) string {
	switch op {
	case opLockSet, opLockGet, opLockDel, opUnlock:
		return depLock
	case opDeliver:
		return depInventory
	}
	return op
}

// Close implements engine.Closer: a ClusterCloser's Close.
func (sys *system) Close() {
	if c, ok := sys.cluster.(ClusterCloser); ok {
		c.Close()
	}
}

// RacesAnswers makes every answer a scheduling point of the concurrent
// groups (engine.AnswerRacer): HonestAnswer judges an answer against the
// database when it is given, and a concurrent write may land first.
func (sys *system) RacesAnswers() {}

// sessionOf is the index of the session numbered no (-1 if none).
func (sys *system) sessionOf(no string) int {
	if rest, ok := strings.CutPrefix(no, "x"); ok {
		if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < len(sys.s.Sessions) && sys.s.Sessions[i].No() == no {
			return i
		}
	}
	return -1
}

// env is the Env of one node id, on its engine port.
type env struct {
	p   *engine.Port[Detail]
	sys *system
}

var _ Env = (*env)(nil)

func (e *env) Now() time.Time { return engine.Epoch.Add(e.p.At() + e.sys.s.Skew(e.p.Node())) }

func (e *env) Wins(p PlayerID) int64 { return e.sys.winsOf(p) }

// winsOf is p's fairness record now: the schedule's, plus what the run
// changed (an Events.Item event applied under CountWins, an Events.Fair
// event).
func (sys *system) winsOf(p PlayerID) int64 {
	sys.winsMu.Lock()
	defer sys.winsMu.Unlock()
	return sys.s.Wins(p) + sys.wins[p]
}

// win raises p's fairness record by n because of session x, recorded as
// an Events.Fair event.
func (e *env) win(x int, p PlayerID, n int64) {
	e.p.Record(e.p.Event(evFair, ""), func(ev *Event, _ []Event) bool {
		e.sys.winsMu.Lock()
		e.sys.wins[p] += n
		e.sys.winsMu.Unlock()
		ev.Detail = Detail{Session: x, Player: p, Wins: n}
		return true
	})
}

func (e *env) Store(op string, fn func() error) error {
	return e.p.Effect(op, func() error {
		e.sys.dbNow.Store(int64(e.p.At()))
		return fn()
	})
}

// observe records, after a store call, every session whose record
// changed, and applies a session's Bumps right after the first record of
// it that shows its claims frozen (SETTLING, or CLOSED).
func (e *env) observe() {
	sys := e.sys
	for i, sess := range sys.s.Sessions {
		ev := e.p.Event(evView, "")
		froze := false
		e.p.Record(ev, func(ev *Event, _ []Event) bool {
			rec := sys.cluster.Read(sess.No())
			if sameRecord(rec, sys.seen[i]) {
				return false
			}
			sys.seen[i] = rec
			ev.Detail = Detail{Session: i, Record: &rec}
			if !sys.frozen[i] && (rec.Status == Statuses.Settling || rec.Status == Statuses.Closed) {
				sys.frozen[i], froze = true, true
			}
			return true
		})
		if froze {
			for _, b := range sess.Bumps {
				e.win(i, b.Player, b.Wins)
			}
		}
	}
}

// lockNow is the lock service's clock at this call.
func (e *env) lockNow() time.Duration { return e.p.At() + e.sys.s.LockSkew }

func (e *env) SetNX(key, token string, ttl time.Duration) (bool, error) {
	var ok bool
	var serr error
	err := e.p.Apply(opLockSet, evLock, func(ev *Event) {
		ok, serr = e.sys.locks.SetNX(e.lockNow(), key, token, ttl)
		ev.Detail = Detail{Session: -1, Key: key, Token: token, OK: ok}
	})
	return ok && err == nil && serr == nil, cmp.Or(err, serr)
}

func (e *env) Get(key string) (string, error) {
	var v string
	var serr error
	err := e.p.Apply(opLockGet, evLock, func(ev *Event) {
		v, serr = e.sys.locks.Get(e.lockNow(), key)
		ev.Detail = Detail{Session: -1, Key: key, Value: v, OK: v != ""}
	})
	if err = cmp.Or(err, serr); err != nil {
		return "", err
	}
	return v, nil
}

func (e *env) Del(key string) error {
	var serr error
	err := e.p.Apply(opLockDel, evLock, func(ev *Event) {
		var held bool
		held, serr = e.sys.locks.Del(e.lockNow(), key)
		ev.Detail = Detail{Session: -1, Key: key, OK: held}
	})
	return cmp.Or(err, serr)
}

func (e *env) Unlock(key, token string) (bool, error) {
	var ok bool
	var serr error
	err := e.p.Apply(opUnlock, evLock, func(ev *Event) {
		ok, serr = e.sys.locks.Unlock(e.lockNow(), key, token)
		ev.Detail = Detail{Session: -1, Key: key, Token: token, OK: ok}
	})
	return ok && err == nil && serr == nil, cmp.Or(err, serr)
}

func (e *env) Deliver(key string, it Item) (bool, error) {
	var applied bool
	err := e.p.Apply(opDeliver, evItem, func(ev *Event) {
		applied = !e.sys.ledger[key]
		e.sys.ledger[key] = true
		if applied && e.sys.s.CountWins {
			// The fairness service counts the win as the item lands,
			// here, whatever the caller is told or does next; the Item
			// event is its record.
			e.sys.winsMu.Lock()
			e.sys.wins[it.Player]++
			e.sys.winsMu.Unlock()
		}
		ev.Detail = Detail{Session: e.sys.sessionOf(it.Session), Player: it.Player, Key: key, OK: applied}
		if ev.Detail.Session < 0 {
			ev.Err = fmt.Sprintf("no session %q", it.Session)
		}
	})
	if err != nil {
		return false, err
	}
	return applied, nil
}

// sameRecord reports whether two records say the same, their Others
// included.
func sameRecord(a, b Record) bool {
	if a.Status != b.Status || !slices.Equal(a.Claims, b.Claims) || !slices.Equal(a.Granted, b.Granted) || !slices.EqualFunc(a.Others, b.Others, sameRecord) {
		return false
	}
	if (a.Snapshot == nil) != (b.Snapshot == nil) {
		return false
	}
	return a.Snapshot == nil || (slices.Equal(a.Snapshot.Claims, b.Snapshot.Claims) && slices.Equal(a.Snapshot.Winners, b.Snapshot.Winners))
}
