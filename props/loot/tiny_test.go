package lootprops_test

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// tiny is a minimal loot design for the tests, as faultstest's are for
// settlements: every request one store call on one mutex-guarded map, a
// settle ranking by the rule and delivering under session:player. Its
// flags break it one way each.
type tiny struct {
	name string
	// lie answers a claim accepted without recording it.
	lie bool
	// twice delivers every item under two keys.
	twice bool
	// panics panics in every settle.
	panics bool
	// refuseOpen refuses every open; refuseClaimOf refuses player
	// refuseClaimOf's claims (0: nobody's), neither with a store call.
	refuseOpen    bool
	refuseClaimOf lootfaults.PlayerID
	// nackOpen fails every open (an error: the sender retries).
	nackOpen bool
	// noteClaims answers every claim noted and records nothing.
	noteClaims bool
}

func (d tiny) Name() string { return d.name }

func (d tiny) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &tinyCluster{d: d, db: db, sessions: map[string]*tinySession{}}
}

type tinySession struct {
	spec    lootfaults.Spec
	status  lootfaults.Status
	claims  []lootfaults.Claim
	winners []lootfaults.PlayerID
}

type tinyCluster struct {
	d        tiny
	db       lootfaults.Clock
	mu       sync.Mutex
	sessions map[string]*tinySession
}

func (c *tinyCluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node { return tinyNode{c, env} }

func (c *tinyCluster) Read(no string) lootfaults.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	x := c.sessions[no]
	if x == nil {
		return lootfaults.Record{}
	}
	return lootfaults.Record{Status: x.status, Claims: slices.Clone(x.claims), Granted: slices.Clone(x.winners)}
}

type tinyNode struct {
	c   *tinyCluster
	env lootfaults.Env
}

// store runs f on session no under the lock, as one store call.
func (n tinyNode) store(op, no string, f func(x *tinySession, now time.Time) engine.Ack) (engine.Ack, error) {
	var a engine.Ack
	err := n.env.Store(op, func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		a = f(n.c.sessions[no], n.c.db.Now())
		return nil
	})
	return a, err
}

func (n tinyNode) Handle(_ time.Time, r lootfaults.Req) (engine.Ack, error) {
	switch r.Kind {
	case lootfaults.Kinds.OpenSession:
		if n.c.d.refuseOpen {
			return lootfaults.Refused, nil
		}
		if n.c.d.nackOpen {
			return engine.Nack, errors.New("tiny: open failed")
		}
		return n.store("open", r.Session, func(x *tinySession, _ time.Time) engine.Ack {
			if x == nil {
				n.c.sessions[r.Session] = &tinySession{spec: *r.Spec, status: lootfaults.Statuses.Open}
			}
			return lootfaults.Accepted
		})
	case lootfaults.Kinds.StartClaims:
		return n.store("start", r.Session, func(x *tinySession, _ time.Time) engine.Ack {
			if x == nil || (x.status != lootfaults.Statuses.Open && x.status != lootfaults.Statuses.Claiming) {
				return lootfaults.Refused
			}
			x.status = lootfaults.Statuses.Claiming
			return lootfaults.Accepted
		})
	case lootfaults.Kinds.ClaimItem:
		if n.c.d.lie {
			return lootfaults.Accepted, nil
		}
		if r.Player == n.c.d.refuseClaimOf {
			return lootfaults.Refused, nil
		}
		if n.c.d.noteClaims {
			return lootfaults.Noted, nil
		}
		return n.store("claim", r.Session, func(x *tinySession, now time.Time) engine.Ack {
			if x == nil || x.status != lootfaults.Statuses.Claiming || !now.Before(x.spec.Deadline) || !slices.Contains(x.spec.Members, r.Player) {
				return lootfaults.Refused
			}
			switch i := slices.IndexFunc(x.claims, func(c lootfaults.Claim) bool { return c.Player == r.Player }); {
			case i < 0:
				x.claims = append(x.claims, lootfaults.Claim{Player: r.Player, Intent: r.Intent, At: now, Fair: n.env.Wins(r.Player)})
				slices.SortFunc(x.claims, func(a, b lootfaults.Claim) int { return cmp.Compare(a.Player, b.Player) })
			case x.claims[i].Intent != r.Intent:
				// A change takes the change's time: the claim time is the
				// current intent's (checkRuleOrder); a repeat keeps it.
				x.claims[i].Intent, x.claims[i].At = r.Intent, now
			}
			return lootfaults.Accepted
		})
	case lootfaults.Kinds.SettleNow:
		if n.c.d.panics {
			panic("tiny: settle")
		}
		var won []lootfaults.PlayerID
		var loot string
		a, err := n.store("freeze", r.Session, func(x *tinySession, now time.Time) engine.Ack {
			if x == nil || x.status != lootfaults.Statuses.Claiming || now.Before(x.spec.Deadline) {
				return lootfaults.Refused
			}
			x.status = lootfaults.Statuses.Settling
			return lootfaults.Accepted
		})
		if err != nil || a != lootfaults.Accepted {
			return a, err
		}
		a, err = n.store("record", r.Session, func(x *tinySession, now time.Time) engine.Ack {
			cs := slices.DeleteFunc(slices.Clone(x.claims), func(c lootfaults.Claim) bool { return c.Intent.Priority() == 0 })
			slices.SortFunc(cs, func(a, b lootfaults.Claim) int {
				return cmp.Or(cmp.Compare(b.Intent.Priority(), a.Intent.Priority()), cmp.Compare(a.Fair, b.Fair), a.At.Compare(b.At), cmp.Compare(a.Player, b.Player))
			})
			for _, c := range cs[:min(len(cs), x.spec.Quantity)] {
				x.winners = append(x.winners, c.Player)
			}
			x.status, won, loot = lootfaults.Statuses.Closed, x.winners, x.spec.Loot
			return lootfaults.Accepted
		})
		if err != nil || a != lootfaults.Accepted {
			return a, err
		}
		for _, p := range won {
			key := fmt.Sprintf("%s:%d", r.Session, p)
			keys := []string{key}
			if n.c.d.twice {
				keys = append(keys, key+":again")
			}
			for _, k := range keys {
				if _, err := n.env.Deliver(k, lootfaults.Item{Session: r.Session, Player: p, Loot: loot}); err != nil {
					return engine.Nack, err
				}
			}
		}
		return lootfaults.Accepted, nil
	case lootfaults.Kinds.CancelSession:
		return n.store("cancel", r.Session, func(x *tinySession, _ time.Time) engine.Ack {
			if x == nil || x.status == lootfaults.Statuses.Closed {
				return lootfaults.Refused
			}
			x.status = lootfaults.Statuses.Canceled
			return lootfaults.Accepted
		})
	}
	return lootfaults.Noted, nil
}
