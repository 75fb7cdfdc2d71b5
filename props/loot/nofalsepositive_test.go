package lootprops_test

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// The designs below are correct allocators that each differ from the
// reference in one way the source document allows, so each must hold in
// every family: a failure of one is the kit failing correct code (issue
// 26's three classes of false positive). The kit runs them as a user's
// test would (lootprops.TestDesign: every family, every property, and
// each family's coverage rule); none declares anything, so any failure,
// "not exercised" included, fails the test.

// TestNoFalsePositiveForALocklessReference: ref/loot's Service without a
// lock, as its Config documents (Lock: "if set"): the settle CAS alone
// decides who settles. Before coverage was defined by what the world did,
// its lock-expiry cell failed as "no lock-expired": a design that takes no
// lock can never have one expire.
func TestNoFalsePositiveForALocklessReference(t *testing.T) {
	lootprops.TestDesign(t, lockless{}, engine.Schedules(100, 1), engine.Dir(t.TempDir()))
}

// TestNoFalsePositiveForAOneWriteSettle: a settle that freezes, ranks and
// closes in one serializable transaction, CLAIMING -> CLOSED with no
// SETTLING any reader could see. Before ForwardOnly accepted a change that
// follows the table's forward edges within one write, every cell that
// settled failed ForwardOnly ("went from CLAIMING to CLOSED").
func TestNoFalsePositiveForAOneWriteSettle(t *testing.T) {
	lootprops.TestDesign(t, oneWrite{}, engine.Schedules(100, 1), engine.Dir(t.TempDir()))
}

// TestNoFalsePositiveForALateRetryAnsweredAlready: the one-write settle
// answering a resend of a claim on record already, even after the freeze
// (a client whose first send timed out and who resends a minute later).
// Before FrozenClaims let a late answer stand for a claim the frozen set
// holds, its late-claim, crash and timeout-after-success cells failed
// FrozenClaims ("answered already ... after x0's claims froze").
func TestNoFalsePositiveForALateRetryAnsweredAlready(t *testing.T) {
	lootprops.TestDesign(t, oneWrite{retriesAlready: true}, engine.Schedules(100, 1), engine.Dir(t.TempDir()))
}

// TestNoFalsePositiveForASnapshotOfValidClaims: the reference whose audit
// snapshot holds the valid claims (NEED and GREED, as the source
// document's 4.6 lists them) and no PASS rows. Before the evidence was
// judged by the claims that can win, every cell with a PASS claim failed
// FrozenClaims and Replayable.
func TestNoFalsePositiveForASnapshotOfValidClaims(t *testing.T) {
	lootprops.TestDesign(t, validSnapshot{}, engine.Schedules(100, 1), engine.Dir(t.TempDir()))
}

// TestNoFalsePositiveForASnapshotInRankOrder: the reference whose snapshot
// lists its claims in rank order (winners first) rather than by player:
// lootfaults.Snapshot states no order, so neither may the check. Before
// Replayable compared the claims as sets, every cell with two claims that
// can win in another order than their players' failed Replayable. Clean
// and quantity (several winners) are enough: the order is all it changes.
func TestNoFalsePositiveForASnapshotInRankOrder(t *testing.T) {
	lootprops.TestDesign(t, validSnapshot{rankOrder: true}, engine.Families(lootfaults.Families.Clean, lootfaults.Families.Quantity), engine.Schedules(100, 1), engine.Dir(t.TempDir()))
}

// lockless is the reference with no lock: its nodes' Env answers every
// lock call itself, as a lock no one else ever holds (SetNX sets, Unlock
// deletes), without reaching the world's lock service. The Service then
// takes exactly its Config.Lock == nil path (takeLock goes on to the CAS;
// the release does nothing the world can see), and the world sees a
// design that takes no lock at all. (The reference's node wiring is
// internal to impls/loot, so the lock is removed here, at the Env.)
type lockless struct{}

func (lockless) Name() string { return "loot-ref-lockless" }

func (lockless) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return locklessCluster{lootref.Design{}.NewCluster(db)}
}

type locklessCluster struct{ lootfaults.Cluster }

func (c locklessCluster) NewNode(id int, env lootfaults.Env) lootfaults.Node {
	return c.Cluster.NewNode(id, noLockEnv{env})
}

type noLockEnv struct{ lootfaults.Env }

func (noLockEnv) SetNX(string, string, time.Duration) (bool, error) { return true, nil }
func (noLockEnv) Get(string) (string, error)                        { return "", nil }
func (noLockEnv) Del(string) error                                  { return nil }
func (noLockEnv) Unlock(string, string) (bool, error)               { return true, nil }

// validSnapshot is the reference whose snapshot keeps the valid claims
// only: the auditor reads the snapshot without its PASS rows, as it would
// read a snapshot table the settler had written without them. The Service
// ranks from the frozen claims, never from a snapshot it reads back, so
// nothing else changes. rankOrder instead keeps every row and lists them
// winners first, in rank order, then the rest by player.
type validSnapshot struct{ rankOrder bool }

func (d validSnapshot) Name() string {
	if d.rankOrder {
		return "loot-ref-rank-order-snapshot"
	}
	return "loot-ref-valid-snapshot"
}

func (d validSnapshot) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return validSnapshotCluster{lootref.Design{}.NewCluster(db), d}
}

type validSnapshotCluster struct {
	lootfaults.Cluster
	d validSnapshot
}

func (c validSnapshotCluster) Read(no string) lootfaults.Record {
	rec := c.Cluster.Read(no)
	if rec.Snapshot == nil {
		return rec
	}
	s := *rec.Snapshot
	s.Claims = slices.Clone(s.Claims)
	if c.d.rankOrder {
		rank := func(p lootfaults.PlayerID) int {
			if i := slices.Index(s.Winners, p); i >= 0 {
				return i
			}
			return len(s.Winners)
		}
		slices.SortStableFunc(s.Claims, func(a, b lootfaults.Claim) int { return cmp.Compare(rank(a.Player), rank(b.Player)) })
	} else {
		s.Claims = slices.DeleteFunc(s.Claims, func(c lootfaults.Claim) bool { return c.Intent == lootfaults.Intents.Pass })
	}
	rec.Snapshot = &s
	return rec
}

// oneWrite is a correct allocator whose settle is one transaction: it
// freezes the claims, ranks them by the rule and closes the session with
// its PENDING grants in one store call (CLAIMING -> CLOSED), then delivers
// each grant under session:player (the inventory applies a key once) and
// marks it delivered. It takes no lock and keeps no snapshot (its
// evidence is the claim rows, frozen by the CLOSED status). A retried or
// late settle of a CLOSED session delivers what is still pending and
// answers already; compensation and Recover settle what is overdue and
// deliver what is pending. Every write is judged by the database's clock.
//
// retriesAlready answers a claim already on record already whatever the
// session's status and the time (a slow client's resend after the
// freeze), before judging anything else: the answer its first send
// earned. The reference refuses such a resend once claims closed; both
// are correct (source 004's 2.2: a repeated claim is "already there").
type oneWrite struct{ retriesAlready bool }

func (d oneWrite) Name() string {
	if d.retriesAlready {
		return "one-write-settle-retries-already"
	}
	return "one-write-settle"
}

func (d oneWrite) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &owCluster{d: d, db: db, sessions: map[string]*owSession{}}
}

type owSession struct {
	spec   lootfaults.Spec
	status lootfaults.Status
	claims []lootfaults.Claim // sorted by player
	grants []owGrant          // rank order
}

type owGrant struct {
	player    lootfaults.PlayerID
	delivered bool
}

type owCluster struct {
	d        oneWrite
	db       lootfaults.Clock
	mu       sync.Mutex
	sessions map[string]*owSession
}

func (c *owCluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node { return owNode{c, env} }

func (c *owCluster) Read(no string) lootfaults.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.sessions[no]
	if x == nil {
		return lootfaults.Record{}
	}
	rec := lootfaults.Record{Status: x.status, Claims: slices.Clone(x.claims)}
	for _, g := range x.grants {
		rec.Granted = append(rec.Granted, g.player)
	}
	return rec
}

type owNode struct {
	c   *owCluster
	env lootfaults.Env
}

// tx runs f as one store call, a serializable transaction on the whole
// database, at the database's time.
func (n owNode) tx(op string, f func(now time.Time) engine.Ack) (engine.Ack, error) {
	var a engine.Ack
	err := n.env.Store(op, func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		a = f(n.c.db.Now())
		return nil
	})
	if err != nil {
		return engine.Nack, err
	}
	return a, nil
}

func (n owNode) Handle(_ time.Time, r lootfaults.Req) (engine.Ack, error) {
	switch r.Kind {
	case lootfaults.Kinds.OpenSession:
		return n.tx("open", func(time.Time) engine.Ack {
			if n.c.sessions[r.Session] != nil {
				return lootfaults.Already
			}
			n.c.sessions[r.Session] = &owSession{spec: *r.Spec, status: lootfaults.Statuses.Open}
			return lootfaults.Accepted
		})
	case lootfaults.Kinds.StartClaims:
		return n.tx("start", func(time.Time) engine.Ack {
			switch x := n.c.sessions[r.Session]; {
			case x == nil:
				return lootfaults.Refused
			case x.status == lootfaults.Statuses.Open:
				x.status = lootfaults.Statuses.Claiming
				return lootfaults.Accepted
			case x.status != lootfaults.Statuses.Canceled:
				return lootfaults.Already
			}
			return lootfaults.Refused
		})
	case lootfaults.Kinds.ClaimItem:
		wins := n.env.Wins(r.Player)
		return n.tx("claim", func(now time.Time) engine.Ack {
			x := n.c.sessions[r.Session]
			if x == nil {
				return lootfaults.Refused
			}
			i := slices.IndexFunc(x.claims, func(c lootfaults.Claim) bool { return c.Player == r.Player })
			if n.c.d.retriesAlready && i >= 0 && x.claims[i].Intent == r.Intent {
				// A retry of a claim on record gets the answer its first
				// send earned, whenever it comes (a slow client's resend
				// after the freeze included): it is in the frozen set.
				return lootfaults.Already
			}
			if x.status != lootfaults.Statuses.Claiming || !now.Before(x.spec.Deadline) || !slices.Contains(x.spec.Members, r.Player) {
				return lootfaults.Refused
			}
			if i >= 0 && x.claims[i].Intent == r.Intent {
				return lootfaults.Already
			}
			if i >= 0 {
				// A change takes the change's time: the claim time is the
				// current intent's (checkRuleOrder).
				x.claims[i].Intent, x.claims[i].At = r.Intent, now
				return lootfaults.Accepted
			}
			x.claims = append(x.claims, lootfaults.Claim{Player: r.Player, Intent: r.Intent, At: now, Fair: wins})
			slices.SortFunc(x.claims, func(a, b lootfaults.Claim) int { return cmp.Compare(a.Player, b.Player) })
			return lootfaults.Accepted
		})
	case lootfaults.Kinds.SettleNow:
		return n.settle(r.Session)
	case lootfaults.Kinds.CancelSession:
		return n.tx("cancel", func(time.Time) engine.Ack {
			switch x := n.c.sessions[r.Session]; {
			case x == nil || x.status == lootfaults.Statuses.Closed:
				return lootfaults.Refused
			case x.status == lootfaults.Statuses.Canceled:
				return lootfaults.Already
			default:
				x.status = lootfaults.Statuses.Canceled
				return lootfaults.Accepted
			}
		})
	}
	if err := n.Recover(time.Time{}); err != nil { // the compensation job's tick
		return engine.Nack, err
	}
	return lootfaults.Noted, nil
}

// settle closes session no in one transaction if it is CLAIMING and due,
// then delivers its pending grants: accepted if this call closed it,
// already if it was closed before; refused if it is not due, not
// claiming, or canceled.
func (n owNode) settle(no string) (engine.Ack, error) {
	var pending []lootfaults.PlayerID
	var loot string
	a, err := n.tx("settle", func(now time.Time) engine.Ack {
		x := n.c.sessions[no]
		switch {
		case x == nil || x.status == lootfaults.Statuses.Open || x.status == lootfaults.Statuses.Canceled:
			return lootfaults.Refused
		case x.status == lootfaults.Statuses.Claiming && now.Before(x.spec.Deadline):
			return lootfaults.Refused
		}
		a := lootfaults.Already
		if x.status == lootfaults.Statuses.Claiming {
			cs := slices.DeleteFunc(slices.Clone(x.claims), func(c lootfaults.Claim) bool { return c.Intent.Priority() == 0 })
			slices.SortFunc(cs, func(a, b lootfaults.Claim) int {
				return cmp.Or(cmp.Compare(b.Intent.Priority(), a.Intent.Priority()), cmp.Compare(a.Fair, b.Fair), a.At.Compare(b.At), cmp.Compare(a.Player, b.Player))
			})
			for _, c := range cs[:min(len(cs), x.spec.Quantity)] {
				x.grants = append(x.grants, owGrant{player: c.Player})
			}
			x.status, a = lootfaults.Statuses.Closed, lootfaults.Accepted
		}
		for _, g := range x.grants {
			if !g.delivered {
				pending = append(pending, g.player)
			}
		}
		loot = x.spec.Loot
		return a
	})
	if err != nil || a == lootfaults.Refused {
		return a, err
	}
	for _, p := range pending {
		if _, err := n.env.Deliver(fmt.Sprintf("%s:%d", no, p), lootfaults.Item{Session: no, Player: p, Loot: loot}); err != nil {
			return engine.Nack, err
		}
		if _, err := n.tx("mark-delivered", func(time.Time) engine.Ack {
			x := n.c.sessions[no]
			x.grants[slices.IndexFunc(x.grants, func(g owGrant) bool { return g.player == p })].delivered = true
			return lootfaults.Accepted
		}); err != nil {
			return engine.Nack, err
		}
	}
	return a, nil
}

// Recover settles every overdue session and delivers every pending grant.
func (n owNode) Recover(time.Time) error { return n.recoverBy(n.settle) }

// recoverBy is Recover through settle (a broken design's own: escape_test.go).
func (n owNode) recoverBy(settle func(no string) (engine.Ack, error)) error {
	var nos []string
	if _, err := n.tx("sessions", func(time.Time) engine.Ack {
		for no := range n.c.sessions {
			nos = append(nos, no)
		}
		return lootfaults.Noted
	}); err != nil {
		return err
	}
	slices.Sort(nos)
	for _, no := range nos {
		if _, err := settle(no); err != nil {
			return err
		}
	}
	return nil
}

// TestStallCoverageIsWhatTheWorldDid: lock-expiry's and
// compensation-race's coverage rules count what the world did to a design
// that takes no lock: a settle stalled past 30s with another trigger of its
// session 34s in is a stalled-settle, and a stall too short, or a trigger
// too early, is not; a compensation tick during a stall counts only when
// the world had seen the session CLOSED before the stall began.
func TestStallCoverageIsWhatTheWorldDid(t *testing.T) {
	const settle = 4 // session's settle request, delivered at 10s
	stalled := func(f engine.Family, effect int, stall time.Duration, then lootfaults.Request, at time.Duration) lootfaults.Schedule {
		s := session(f)
		s.Nodes = 2
		s.Requests = append(s.Requests, then)
		s.Deliveries = append(s.Deliveries, engine.Delivery{At: at, Msg: then.ID, Node: 1})
		s.Faults = []engine.Fault{{Attempt: settle, Effect: effect, Kind: engine.Pause, For: stall, OnDelivery: true}}
		return s
	}
	again := lootfaults.Request{ID: 5, Kind: lootfaults.Kinds.SettleNow}
	comp := lootfaults.Request{ID: 5, Kind: lootfaults.Kinds.Compensate, Session: -1}
	for _, c := range []struct {
		name  string
		s     lootfaults.Schedule
		reach string
		want  int
	}{
		{"a 35s stall and a trigger 34s in", stalled(lootfaults.Families.LockExpiry, 0, 35*time.Second, again, 44*time.Second), "stalled-settle", 1},
		{"a 15s stall, shorter than any lock's ttl", stalled(lootfaults.Families.LockExpiry, 0, 15*time.Second, again, 24*time.Second), "stalled-settle", 0},
		{"a trigger 20s into a 35s stall", stalled(lootfaults.Families.LockExpiry, 0, 35*time.Second, again, 30*time.Second), "stalled-settle", 0},
		{"compensation while a closed session's settler stalls", stalled(lootfaults.Families.CompensationRace, 1, 35*time.Second, comp, 44*time.Second), "compensate-in-pause", 1},
		{"compensation while the settler stalls before it closed", stalled(lootfaults.Families.CompensationRace, 0, 35*time.Second, comp, 44*time.Second), "compensate-in-pause", 0},
	} {
		if err := lootfaults.World.Validate(c.s); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, lootfaults.World.Format(c.s))
		}
		if got := lootfaults.World.Coverage(engine.History[lootfaults.Schedule, lootfaults.Detail](lootfaults.Run(oneWrite{}, c.s, engine.RunOptions{})))[c.reach]; got != c.want {
			t.Errorf("%s: %s counted %d, want %d (go test -run '^TestStallCoverageIsWhatTheWorldDid$' ./props/loot/); the schedule:\n%s", c.name, c.reach, got, c.want, lootfaults.World.Format(c.s))
		}
	}
}
