package props

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// The designs below close issue 26's audit of the settlement world: each is
// correct but for one thing that only a case no column made could show, so
// each holds every column the matrix had before the audit (auditColumns)
// and is caught in the column that makes the case.

// auditColumns are the columns the audit added: pause and four joins.
var auditColumns = []faults.Family{
	faults.Families.Pause,
	faults.Join(faults.Families.ThirdKind, faults.Families.MultiNode, faults.Families.Crash),
	faults.Join(faults.Families.ThirdKind, faults.Families.MultiNode, faults.Families.TimeoutSuccess),
	faults.Join(faults.Families.ThirdKind, faults.Families.StoreError),
	faults.Join(faults.Families.ThirdKind, faults.Families.Pause),
}

// columnsBeforeTheAudit are the matrix's columns without the audit's: the
// families and joins of main before it, whose generators the audit left
// as they were (their pins did not move), so a design that holds them here
// holds them on main's generator.
func columnsBeforeTheAudit() []faults.Family {
	return slices.DeleteFunc(slices.Clone(World.Columns()), func(f faults.Family) bool { return slices.Contains(auditColumns, f) })
}

// auditKey is a settlement's business key.
func auditKey(s faults.Settlement) string {
	return fmt.Sprintf("p%d/m%d/%s", s.Player, s.Match, s.Kind)
}

// settler is a correct design but for the knobs, each a way to go wrong
// on one settlement kind or one fault: a node claims the settlement's
// record, credits under a grant key and commits; a record found delivered
// is a duplicate, one found claimed (by a crash, a timeout or another
// node) is completed through the keyed credit; Recover completes every
// claimed record whose lease (fencedLease from its claim) ran out, as
// ref's does, so a retry, not the rebuilt node, completes what a crash
// cut short. Three effects: claim (0), credit (1), commit (2).
type settler struct {
	name string
	// thirdGrantOnNode: a third kind's grant key carries the node that
	// credits it (a bonus service keyed per node).
	thirdGrantOnNode bool
	// thirdFailIsDone: a third kind whose claim fails (engine.ErrInjected:
	// nothing happened) is acked as credited ("a bonus is best effort").
	thirdFailIsDone bool
	// thirdTimeoutIsNotDone: a third kind whose claim times out
	// (engine.ErrTimeout: it happened) is claimed again at once, and the
	// record that claim finds is taken for another delivery's: acked as a
	// duplicate.
	thirdTimeoutIsNotDone bool
}

func (d settler) Name() string { return d.name }
func (d settler) NewCluster() faults.Cluster {
	return &settlerCluster{d: d, recs: map[string]*settlerRec{}}
}

type settlerRec struct {
	s         faults.Settlement
	until     time.Time // the claim's lease
	delivered bool
}

type settlerCluster struct {
	d    settler
	mu   sync.Mutex
	recs map[string]*settlerRec
}

func (c *settlerCluster) NewNode(id int, env faults.Env) faults.Node {
	return &settlerNode{c: c, id: id, env: env}
}

type settlerNode struct {
	c   *settlerCluster
	id  int
	env faults.Env
}

// claim creates s's record if there is none and reports whether there
// was one, and whether it was delivered.
func (n *settlerNode) claim(now time.Time, s faults.Settlement) (existed, delivered bool, err error) {
	err = n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		r := n.c.recs[auditKey(s)]
		if r == nil {
			n.c.recs[auditKey(s)] = &settlerRec{s: s, until: now.Add(fencedLease)}
			return nil
		}
		existed, delivered = true, r.delivered
		return nil
	})
	return existed, delivered, err
}

func (n *settlerNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	_, delivered, err := n.claim(now, s)
	third := s.Kind == faults.KindThird
	switch {
	case err != nil && third && n.c.d.thirdFailIsDone && errors.Is(err, engine.ErrInjected):
		return faults.AckCredited, nil
	case err != nil && third && n.c.d.thirdTimeoutIsNotDone && errors.Is(err, engine.ErrTimeout):
		// "Nothing was written": claim again; a record there now is
		// another delivery's.
		existed, _, err := n.claim(now, s)
		if err == nil && existed {
			return faults.AckDuplicate, nil
		}
		return faults.Nack, err
	case err != nil:
		return faults.Nack, err
	case delivered:
		return faults.AckDuplicate, nil
	}
	if err := n.complete(s); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

func (n *settlerNode) complete(s faults.Settlement) error {
	grant := auditKey(s)
	if n.c.d.thirdGrantOnNode && s.Kind == faults.KindThird {
		grant += fmt.Sprintf("@node%d", n.id)
	}
	if _, err := n.env.Credit(grant, s, s.Room); err != nil {
		return err
	}
	return n.env.Durable("commit", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		n.c.recs[auditKey(s)].delivered = true
		return nil
	})
}

// Recover completes every claimed record whose lease ran out, in
// settlement order (a history must not depend on map order).
func (n *settlerNode) Recover(now time.Time) error {
	n.c.mu.Lock()
	var todo []faults.Settlement
	for _, r := range n.c.recs {
		if !r.delivered && !now.Before(r.until) {
			todo = append(todo, r.s)
		}
	}
	n.c.mu.Unlock()
	slices.SortFunc(todo, func(a, b faults.Settlement) int { return a.ID - b.ID })
	var errs []error
	for _, s := range todo {
		errs = append(errs, n.complete(s))
	}
	return errors.Join(errs...)
}

// fencedLease is how long a fenced claim is its owner's: ref's default
// lease (30 s), which the pause family's long stall (35 s) outlasts.
const fencedLease = 30 * time.Second

// fenced is a correct lease-and-fence design, one whose claim is
// exclusive while its lease lives and taken over after: the claim (0)
// creates the record under fence 1 and a lease, or, on a lease that ran
// out (its owner crashed, or is this node's own earlier call), takes it
// over under the next fence, and a live lease of another node is a nack;
// the mark (1) records, in the same write that checks the fence is still
// this call's, the fence whose grant key the credit (2) uses, k#fence; the
// commit (3) records delivery. A takeover of a record marked under fence f
// credits under k#f again (its owner may have credited it: the same grant
// is a no-op), of one never marked under a fence of its own: nothing was
// credited under any. So a crash anywhere is completed once, by a retry
// or Recover, and with checkFence the design holds every column.
//
// Without checkFence the mark writes whatever the record holds: a call
// that froze between its claim and its mark for longer than the lease, a
// node that took the claim over meanwhile and credited under k#2, and the
// call, resumed, marks fence 1 and credits k#1: twice (NoDup). Only a
// pause makes a call outlive its lease: a crash ends the call, and every
// other family's calls take no virtual time.
type fenced struct {
	name       string
	checkFence bool
}

func (d fenced) Name() string { return d.name }
func (d fenced) NewCluster() faults.Cluster {
	return &fencedCluster{check: d.checkFence, recs: map[string]*fencedRec{}}
}

type fencedRec struct {
	s         faults.Settlement
	fence     int       // the latest claim's
	marked    int       // the fence whose grant was credited under, 0 if none
	owner     int       // the node of the latest claim
	until     time.Time // its lease
	delivered bool
}

type fencedCluster struct {
	check bool
	mu    sync.Mutex
	recs  map[string]*fencedRec
}

func (c *fencedCluster) NewNode(id int, env faults.Env) faults.Node {
	return &fencedNode{c: c, id: id, env: env}
}

type fencedNode struct {
	c   *fencedCluster
	id  int
	env faults.Env
}

// errFenced: the call's claim was taken over while it ran.
var errFenced = errors.New("the claim was taken over: another call holds a later fence")

// take claims k for node id at now (c.mu held): the fence this call holds
// and the one its grant uses, or ok false (delivered, or a live lease of
// another node: held).
func (c *fencedCluster) take(k string, s faults.Settlement, id int, now time.Time) (fence, grant int, delivered, ok bool) {
	r := c.recs[k]
	switch {
	case r == nil:
		c.recs[k] = &fencedRec{s: s, fence: 1, owner: id, until: now.Add(fencedLease)}
		return 1, 1, false, true
	case r.delivered:
		return 0, 0, true, false
	case r.owner != id && now.Before(r.until):
		return 0, 0, false, false
	}
	r.fence++
	r.owner, r.until = id, now.Add(fencedLease)
	grant = r.fence
	if r.marked > 0 {
		grant = r.marked
	}
	return r.fence, grant, false, true
}

func (n *fencedNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	k := auditKey(s)
	var fence, grant int
	var delivered, ok bool
	if err := n.env.Durable("claim", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		fence, grant, delivered, ok = n.c.take(k, s, n.id, now)
		return nil
	}); err != nil {
		return faults.Nack, err
	}
	switch {
	case delivered:
		return faults.AckDuplicate, nil
	case !ok:
		return faults.Nack, nil // a live owner holds the lease
	}
	if err := n.complete(k, s, fence, grant); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

// complete marks, credits and commits k under fence, crediting the grant
// of fence grant.
func (n *fencedNode) complete(k string, s faults.Settlement, fence, grant int) error {
	if err := n.env.Durable("mark", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		r := n.c.recs[k]
		if n.c.check && r.fence != fence {
			return errFenced
		}
		r.marked = grant
		return nil
	}); err != nil {
		return err
	}
	if _, err := n.env.Credit(fmt.Sprintf("%s#%d", k, grant), s, s.Room); err != nil {
		return err
	}
	return n.env.Durable("commit", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		n.c.recs[k].delivered = true
		return nil
	})
}

// Recover takes over and completes every record it can take (one whose
// lease ran out, or this node's own), in settlement order.
func (n *fencedNode) Recover(now time.Time) error {
	type job struct {
		k            string
		s            faults.Settlement
		fence, grant int
	}
	n.c.mu.Lock()
	var todo []job
	for k, r := range n.c.recs {
		if r.delivered {
			continue
		}
		if fence, grant, _, ok := n.c.take(k, r.s, n.id, now); ok {
			todo = append(todo, job{k, r.s, fence, grant})
		}
	}
	n.c.mu.Unlock()
	slices.SortFunc(todo, func(a, b job) int { return a.s.ID - b.s.ID })
	var errs []error
	for _, j := range todo {
		errs = append(errs, n.complete(j.k, j.s, j.fence, j.grant))
	}
	return errors.Join(errs...)
}

// auditN is the schedules per column the tests run on the columns before
// the audit: half the kit's budget, a tenth of it under -short.
func auditN() int {
	if testing.Short() {
		return engine.ShortMatrixN
	}
	return engine.DefaultMatrixN / 2
}

// holdsBeforeTheAudit fails t unless d holds every column the matrix had
// before the audit, at auditN schedules each.
func holdsBeforeTheAudit(t *testing.T, d faults.Design, repro string) {
	t.Helper()
	row := engine.Check(World, d, MatrixOptions{Families: columnsBeforeTheAudit(), N: auditN(), ShrinkBudget: 1})
	for _, c := range row.Cells {
		if !c.Holds() {
			t.Errorf("%s under %s: %s; want it to hold every column the matrix had before the audit: none makes its case (%s)", d.Name(), c.Family, c.Text(), repro)
		}
	}
}

// auditSeeds is how many seeds the tests count catches over: 100, under
// -short too (100 runs of one column cost a fraction of a second), since
// the rarest catch below is about 1 seed in 13.
const auditSeeds = 100

// caught counts the seeds 1..n of family f whose schedule fails property p
// on d.
func caught(d faults.Design, f faults.Family, p faults.Property, n int) int {
	k := 0
	for seed := range uint64(n) {
		if Judge(faults.Run(d, World.Generate(f, seed+1), faults.RunOptions{})).Outcome(p) == Fails {
			k++
		}
	}
	return k
}

// TestAuditDesignsHoldBeforeTheAuditAndAreCaughtAfter: for each gap issue
// 26's audit found in the settlement world, a design broken only where
// the gap was holds every column the matrix had before, and fails in the
// column that closes it on some of auditSeeds seeds (the log gives the
// count); a correct design built the same way holds that column.
func TestAuditDesignsHoldBeforeTheAuditAndAreCaughtAfter(t *testing.T) {
	const repro = "go test -run '^TestAuditDesignsHoldBeforeTheAuditAndAreCaughtAfter$' ./props"
	for _, x := range []struct {
		d      faults.Design
		family faults.Family
		p      faults.Property
		why    string
	}{
		{fenced{name: "fence-unchecked-on-resume"}, faults.Families.Pause, faults.Properties.NoDup,
			"a call frozen past its lease marks and credits under its old fence after another node took the claim over and credited under the next"},
		{settler{name: "third-grant-on-node", thirdGrantOnNode: true}, auditColumns[1], faults.Properties.NoDup,
			"a third kind crashed on one node is completed on another, under another grant key"},
		{settler{name: "third-timeout-not-done", thirdTimeoutIsNotDone: true}, auditColumns[2], faults.Properties.HonestAck,
			"a third kind's claim that landed and timed out finds its own record and is acked duplicate before any credit"},
		{settler{name: "third-fail-is-done", thirdFailIsDone: true}, auditColumns[3], faults.Properties.NoLoss,
			"a third kind whose claim failed is acked credited, and nothing ever credits it"},
	} {
		t.Run(x.d.Name(), func(t *testing.T) {
			holdsBeforeTheAudit(t, x.d, repro)
			n := auditSeeds
			k := caught(x.d, x.family, x.p, n)
			t.Logf("%s under %s: %d of %d seeds fail %s", x.d.Name(), x.family, k, n, x.p)
			if k == 0 {
				t.Errorf("%s under %s: 0 of %d seeds fail %s; want some: %s (%s)", x.d.Name(), x.family, n, x.p, x.why, repro)
			}
		})
	}
}

// TestCorrectAuditDesignsHoldTheAuditColumns: the designs above without
// their flaw hold every column the audit added, so what catches each is
// its flaw, not the way it is built.
func TestCorrectAuditDesignsHoldTheAuditColumns(t *testing.T) {
	const repro = "go test -run '^TestCorrectAuditDesignsHoldTheAuditColumns$' ./props"
	for _, d := range []faults.Design{fenced{name: "fenced", checkFence: true}, settler{name: "settler"}} {
		row := engine.Check(World, d, MatrixOptions{Families: auditColumns, N: auditN(), ShrinkBudget: 1})
		for _, c := range row.Cells {
			if !c.Holds() {
				t.Errorf("%s under %s: %s; want it to hold: it is correct (%s)", d.Name(), c.Family, c.Text(), repro)
			}
		}
	}
}
