package lootprops_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// The designs below are the one-write allocator (oneWrite, correct in
// every family) broken one way each, the way an allocator nobody here
// wrote gets a request kind wrong that the generator once never repeated
// or faulted (issue 26: opens and starts delivered once and never failed,
// no fault on a cancel, nothing failing 4 times in a row). Each must fail
// a property in the family that now makes its case.

// TestEscapedBrokenDesignsAreCaught: each broken design fails the named
// property in some schedule of its family within the matrix's budget
// (engine.DefaultMatrixN from seed 1), and, where a case asks for a share,
// in at least that many of the first 100. Each escaped the generator
// before it repeated and faulted every request kind and drew outages.
func TestEscapedBrokenDesignsAreCaught(t *testing.T) {
	for _, c := range []struct {
		d    broken
		f    engine.Family
		fail engine.Property
		// share, if set, is how many of seeds 1..100 must fail.
		share int
	}{
		// A repeated open (a gateway's resend 5s later) wipes the claims
		// answered accepted in between.
		{broken{openResets: true}, lootfaults.Families.DuplicateClaim, lootfaults.Properties.FrozenClaims, 0},
		// A repeated start restarts the claim window with no claims.
		{broken{startResets: true}, lootfaults.Families.DuplicateClaim, lootfaults.Properties.FrozenClaims, 0},
		// A cancel cut between its two writes (a crash, a failed second
		// write, a first write that timed out) leaves a flag that makes
		// every settle and every retry of the cancel refuse: the session
		// stays CLAIMING for ever.
		// The generator's cancelFault aims a fault at a cancel racing a
		// settle in each fault family; its doc derives the share that
		// shows this design, 5/24 (about 21 of 100), and the bound asks
		// for 15 of 100, three quarters of it: rapid does not draw
		// uniformly, and store-error's outages cut some cancels short
		// before their first write. Before the step: 0, 1 and 0 of 100
		// (the first failure at crash seed 104).
		{broken{cancelHalfDone: true}, lootfaults.Families.Crash, lootfaults.Properties.NoLostGrant, 15},
		{broken{cancelHalfDone: true}, lootfaults.Families.StoreError, lootfaults.Properties.NoLostGrant, 15},
		{broken{cancelHalfDone: true}, lootfaults.Families.TimeoutSuccess, lootfaults.Properties.NoLostGrant, 15},
		// Delivery that gives up on an item after 3 failed tries: an
		// inventory outage fails more than 3 in a row.
		{broken{giveUpAfter: 3}, lootfaults.Families.StoreError, lootfaults.Properties.NoLostGrant, 0},
	} {
		const run = "go test -run '^TestEscapedBrokenDesignsAreCaught$' ./props/loot/"
		seed, r, s := firstFailure(c.d, c.f, c.fail)
		if seed == 0 {
			t.Errorf("%s passes %s in %d %s schedules from seed 1 (%s)", c.d.Name(), c.fail, engine.DefaultMatrixN, c.f, run)
			continue
		}
		t.Logf("%s fails %s at %s seed %d:\n%v\n%s", c.d.Name(), c.fail, c.f, seed, r, lootfaults.World.Format(s))
		if c.share == 0 {
			continue
		}
		if n := failures(c.d, c.f, c.fail, 100); n < c.share {
			t.Errorf("%s fails %s in %d of %s's seeds 1..100, want at least %d (%s)", c.d.Name(), c.fail, n, c.f, c.share, run)
		}
	}
}

// failures is how many of family f's seeds 1..n fail p when d runs them.
func failures(d lootfaults.Design, f engine.Family, p engine.Property, n uint64) int {
	k := 0
	for seed := uint64(1); seed <= n; seed++ {
		if r := lootprops.Judge(lootfaults.Run(d, lootfaults.World.Generate(f, seed), engine.RunOptions{})); slices.Contains(r.Failed(), p) {
			k++
		}
	}
	return k
}

// firstFailure is the first seed of family f, of the matrix's
// DefaultMatrixN from seed 1, whose run of d fails p (0 if none), with the
// report and the schedule.
func firstFailure(d lootfaults.Design, f engine.Family, p engine.Property) (uint64, engine.Report, lootfaults.Schedule) {
	for seed := uint64(1); seed <= engine.DefaultMatrixN; seed++ {
		s := lootfaults.World.Generate(f, seed)
		r := lootprops.Judge(lootfaults.Run(d, s, engine.RunOptions{}))
		if slices.Contains(r.Failed(), p) {
			return seed, r, s
		}
	}
	return 0, nil, lootfaults.Schedule{}
}

// broken is oneWrite with one flag set: openResets answers a repeated open
// already but empties the claims; startResets answers a start of a
// CLAIMING session accepted and empties its claims; cancelHalfDone cancels
// in two writes (a canceling flag, then CANCELED) and refuses a settle, and
// a cancel, that finds the flag; giveUpAfter > 0 counts failed deliveries
// of each item and, once giveUpAfter have failed, reports the item
// delivered without sending it (a compensation that abandons it).
type broken struct {
	openResets, startResets, cancelHalfDone bool
	giveUpAfter                             int
}

func (d broken) Name() string {
	var parts []string
	for _, f := range []struct {
		on   bool
		name string
	}{{d.openResets, "open-resets"}, {d.startResets, "start-resets"}, {d.cancelHalfDone, "cancel-half-done"}, {d.giveUpAfter > 0, fmt.Sprintf("gives-up-after-%d", d.giveUpAfter)}} {
		if f.on {
			parts = append(parts, f.name)
		}
	}
	return "one-write-" + strings.Join(parts, "-")
}

func (d broken) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &brokenCluster{owCluster: oneWrite{}.NewCluster(db).(*owCluster), d: d, canceling: map[string]bool{}, failed: map[string]int{}}
}

type brokenCluster struct {
	*owCluster
	d broken
	// canceling is the half-done cancel's flag per session, under
	// owCluster.mu (a column of the session row).
	canceling map[string]bool
	// failed counts failed deliveries per key (under failedMu: a column of
	// the grant row the design updates after each try).
	failedMu sync.Mutex
	failed   map[string]int
}

func (c *brokenCluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node {
	if c.d.giveUpAfter > 0 {
		env = giveUpEnv{env, c}
	}
	return brokenNode{owNode{c.owCluster, env}, c}
}

// giveUpEnv is the Env of a design that abandons an item after
// giveUpAfter failed deliveries: it answers every later delivery of the
// item applied without making it.
type giveUpEnv struct {
	lootfaults.Env
	c *brokenCluster
}

func (e giveUpEnv) Deliver(key string, it lootfaults.Item) (bool, error) {
	e.c.failedMu.Lock()
	n := e.c.failed[key]
	e.c.failedMu.Unlock()
	if n >= e.c.d.giveUpAfter {
		return true, nil
	}
	ok, err := e.Env.Deliver(key, it)
	if err != nil {
		e.c.failedMu.Lock()
		e.c.failed[key]++
		e.c.failedMu.Unlock()
	}
	return ok, err
}

type brokenNode struct {
	owNode
	c *brokenCluster
}

func (n brokenNode) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	d := n.c.d
	switch {
	case r.Kind == lootfaults.Kinds.OpenSession && d.openResets:
		return n.tx("open", func(time.Time) engine.Ack {
			if x := n.c.sessions[r.Session]; x != nil {
				x.claims = nil
				return lootfaults.Already
			}
			n.c.sessions[r.Session] = &owSession{spec: *r.Spec, status: lootfaults.Statuses.Open}
			return lootfaults.Accepted
		})
	case r.Kind == lootfaults.Kinds.StartClaims && d.startResets:
		return n.tx("start", func(time.Time) engine.Ack {
			switch x := n.c.sessions[r.Session]; {
			case x == nil || x.status == lootfaults.Statuses.Canceled:
				return lootfaults.Refused
			case x.status == lootfaults.Statuses.Open || x.status == lootfaults.Statuses.Claiming:
				x.status, x.claims = lootfaults.Statuses.Claiming, nil
				return lootfaults.Accepted
			}
			return lootfaults.Already
		})
	case r.Kind == lootfaults.Kinds.CancelSession && d.cancelHalfDone:
		return n.cancelInTwo(r.Session)
	case r.Kind == lootfaults.Kinds.SettleNow && d.cancelHalfDone:
		return n.settle(r.Session)
	case r.Kind == lootfaults.Kinds.Compensate && d.cancelHalfDone:
		if err := n.Recover(now); err != nil {
			return engine.Nack, err
		}
		return lootfaults.Noted, nil
	}
	return n.owNode.Handle(now, r)
}

// cancelInTwo sets the canceling flag in one write and CANCELED in a
// second; a cancel that finds the flag refuses (it takes the flag for
// another cancel in progress), which is what a crash between the writes
// makes wrong.
func (n brokenNode) cancelInTwo(no string) (engine.Ack, error) {
	a, err := n.tx("cancel-begin", func(time.Time) engine.Ack {
		switch x := n.c.sessions[no]; {
		case x == nil || x.status == lootfaults.Statuses.Closed || n.c.canceling[no]:
			return lootfaults.Refused
		case x.status == lootfaults.Statuses.Canceled:
			return lootfaults.Already
		}
		n.c.canceling[no] = true
		return lootfaults.Accepted
	})
	if err != nil || a != lootfaults.Accepted {
		return a, err
	}
	return n.tx("cancel-end", func(time.Time) engine.Ack {
		if x := n.c.sessions[no]; x.status != lootfaults.Statuses.Open && x.status != lootfaults.Statuses.Claiming {
			return lootfaults.Refused
		}
		n.c.sessions[no].status = lootfaults.Statuses.Canceled
		return lootfaults.Accepted
	})
}

// settle refuses while the canceling flag is set, else settles as oneWrite.
func (n brokenNode) settle(no string) (engine.Ack, error) {
	a, err := n.tx("settle-guard", func(time.Time) engine.Ack {
		if n.c.canceling[no] {
			return lootfaults.Refused
		}
		return lootfaults.Noted
	})
	if err != nil || a == lootfaults.Refused {
		return a, err
	}
	return n.owNode.settle(no)
}

// Recover is oneWrite's, through the guarded settle.
func (n brokenNode) Recover(time.Time) error { return n.owNode.recoverBy(n.settle) }
