package lootprops_test

import (
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// TestASecondRecordUnderOneNumberFailsForwardOnly: a design that writes a
// second session record on a repeated open, or on a repeated start (an
// INSERT with no unique key on the session number, answered already),
// fails ForwardOnly in duplicate-claim, whose opens and starts arrive
// again. Everything else it does is the one-write allocator's, on the
// first record, so an auditor that reads one record per number (the
// world's Read before Record.Others: auditFirst) saw a correct design: it
// holds every property in every run of that cell and of the three fault
// families, whose opens and starts also arrive again.
func TestASecondRecordUnderOneNumberFailsForwardOnly(t *testing.T) {
	const run = "go test -run '^TestASecondRecordUnderOneNumberFailsForwardOnly$' ./props/loot/"
	f := lootfaults.Families.DuplicateClaim
	for _, on := range []lootfaults.Kind{lootfaults.Kinds.OpenSession, lootfaults.Kinds.StartClaims} {
		d := twoRecords{on: on}
		seed, r, s := firstFailure(d, f, lootfaults.Properties.ForwardOnly)
		if seed == 0 {
			t.Errorf("%s passes ForwardOnly in %d %s schedules from seed 1 (%s)", d.Name(), engine.DefaultMatrixN, f, run)
			continue
		}
		t.Logf("%s fails ForwardOnly at %s seed %d:\n%v\n%s", d.Name(), f, seed, r, lootfaults.World.Format(s))
		// The world records a view at the store call that wrote the
		// second record (a change of Others alone is a change), so the
		// anomaly points at the repeat itself, not at a later write.
		for _, v := range r {
			if v.Property != lootfaults.Properties.ForwardOnly {
				continue
			}
			if a := v.Anomalies[0]; len(a.Deliveries) == 0 || s.Requests[s.Deliveries[a.Deliveries[0]].Msg].Kind != on {
				t.Errorf("%s at %s seed %d: ForwardOnly's anomaly %v is not at a delivery of the repeated %s (%s)", d.Name(), f, seed, a, on, run)
			}
		}
		blind := twoRecords{on: on, auditFirst: true}
		for _, g := range []engine.Family{f, lootfaults.Families.Crash, lootfaults.Families.StoreError, lootfaults.Families.TimeoutSuccess} {
			for seed := uint64(1); seed <= engine.DefaultMatrixN; seed++ {
				if r := lootprops.Judge(lootfaults.Run(blind, lootfaults.World.Generate(g, seed), engine.RunOptions{})); len(r.Failed()) > 0 {
					t.Errorf("%s, read one record per number, fails %v at %s seed %d; it should hold everywhere but in what a second record shows (%s)\n%v", blind.Name(), r.Failed(), g, seed, run, r)
					break
				}
			}
		}
	}
}

// twoRecords is oneWrite whose database keeps no unique key on the session
// number: a repeat of request kind on (an open of a session it has, or a
// start of a session already past OPEN) inserts another record under the
// number (OPEN, or CLAIMING) and answers already. Every other request finds
// the first record, as a lookup by number that takes the first row does,
// so the extra records are never claimed, settled or delivered from: the
// harm the auditor must see is the record itself. auditFirst reads one
// record per number, as the world's Read did before Record.Others.
type twoRecords struct {
	on         lootfaults.Kind
	auditFirst bool
}

func (d twoRecords) Name() string {
	n := "one-write-" + d.on.String() + "-inserts-again"
	if d.auditFirst {
		n += "-read-first"
	}
	return n
}

func (d twoRecords) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &twoRecordsCluster{owCluster: oneWrite{}.NewCluster(db).(*owCluster), d: d, extra: map[string][]lootfaults.Status{}}
}

type twoRecordsCluster struct {
	*owCluster
	d twoRecords
	// extra are the further records' statuses per session number, under
	// owCluster.mu (rows of the same table).
	extra map[string][]lootfaults.Status
}

func (c *twoRecordsCluster) NewNode(_ int, env lootfaults.Env) lootfaults.Node {
	return twoRecordsNode{owNode{c.owCluster, env}, c}
}

func (c *twoRecordsCluster) Read(no string) lootfaults.Record {
	rec := c.owCluster.Read(no)
	if c.d.auditFirst {
		return rec
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.extra[no] {
		rec.Others = append(rec.Others, lootfaults.Record{Status: st})
	}
	return rec
}

type twoRecordsNode struct {
	owNode
	c *twoRecordsCluster
}

func (n twoRecordsNode) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	switch {
	case r.Kind == lootfaults.Kinds.OpenSession && n.c.d.on == r.Kind:
		return n.tx("open", func(time.Time) engine.Ack {
			if n.c.sessions[r.Session] != nil {
				n.c.extra[r.Session] = append(n.c.extra[r.Session], lootfaults.Statuses.Open)
				return lootfaults.Already
			}
			n.c.sessions[r.Session] = &owSession{spec: *r.Spec, status: lootfaults.Statuses.Open}
			return lootfaults.Accepted
		})
	case r.Kind == lootfaults.Kinds.StartClaims && n.c.d.on == r.Kind:
		return n.tx("start", func(time.Time) engine.Ack {
			switch x := n.c.sessions[r.Session]; {
			case x == nil || x.status == lootfaults.Statuses.Canceled:
				return lootfaults.Refused
			case x.status == lootfaults.Statuses.Open:
				x.status = lootfaults.Statuses.Claiming
				return lootfaults.Accepted
			}
			n.c.extra[r.Session] = append(n.c.extra[r.Session], lootfaults.Statuses.Claiming)
			return lootfaults.Already
		})
	}
	return n.owNode.Handle(now, r)
}
