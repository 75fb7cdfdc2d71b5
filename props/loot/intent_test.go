package lootprops_test

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/impls/loot/lootref"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// upgradeLate is the intent-change case that decides the rank: player 1
// sends GREED at 1s, player 2 NEED at 3s, and player 1 upgrades to NEED at
// 7s; one item, nobody has won before. By the claim time of the current
// intent player 2's NEED (3s) ranks before player 1's (7s); by the row's
// first appearance player 1 (1s) would win with a place held by a GREED.
const upgradeLate = `# onceproof schedule v1
family loot:intent-change
nodes 2
retry 250ms
max-attempts 16
concurrent false

team 1 2 3
session x0 quantity=1 deadline=10s
request r0 open x0
request r1 start x0
request r2 claim x0 player=1 intent=GREED
request r3 claim x0 player=2 intent=NEED
request r4 claim x0 player=1 intent=NEED
request r5 settle x0

deliver at=0s r0 node=0
deliver at=50ms r1 node=0
deliver at=1s r2 node=0
deliver at=3s r3 node=1
deliver at=7s r4 node=1
deliver at=10s r5 node=0
`

// TestRuleOrderRanksTheCurrentIntentsTime: on upgradeLate the reference
// (whose claim time moves with the intent) holds RuleOrder and grants
// player 2, and a design that keeps the row's first time (source 004's
// ON DUPLICATE KEY UPDATE, which leaves created_at) fails it. Before the
// oracle took the current intent's time, the reference failed here and
// the first-time design held.
func TestRuleOrderRanksTheCurrentIntentsTime(t *testing.T) {
	s, err := lootfaults.World.Parse(upgradeLate)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    lootfaults.Design
		want engine.Outcome
	}{
		{lootref.Design{}, engine.Holds},
		{firstTime{}, engine.Fails},
	} {
		h := lootfaults.Run(c.d, s, engine.RunOptions{})
		r := lootprops.Judge(h)
		v, _ := r.Verdict(lootfaults.Properties.RuleOrder)
		if v.Outcome != c.want {
			t.Errorf("%s: RuleOrder %v, want %v (go test -run '^TestRuleOrderRanksTheCurrentIntentsTime$' ./props/loot/; the schedule is upgradeLate):\n%v\n%s",
				c.d.Name(), v.Outcome, c.want, r, lootprops.Timeline(h, r))
		}
		if got := slices.DeleteFunc(r.Failed(), func(p engine.Property) bool { return p == lootfaults.Properties.RuleOrder }); len(got) > 0 {
			t.Errorf("%s fails %v besides RuleOrder on upgradeLate (go test -run '^TestRuleOrderRanksTheCurrentIntentsTime$' ./props/loot/):\n%v", c.d.Name(), got, r)
		}
	}
}

// TestFirstTimeFailsIntentChange: the generated intent-change family
// catches the design that ranks by a row's first appearance, and the
// reference holds there (lootprops.TestDesign: every property and the
// family's coverage rule).
func TestFirstTimeFailsIntentChange(t *testing.T) {
	f := lootfaults.Families.IntentChange
	lootprops.TestDesign(t, lootref.Design{}, engine.Families(f), engine.Schedules(100, 1), engine.Dir(t.TempDir()))
	const n = 100
	for seed := uint64(1); seed <= n; seed++ {
		s := lootfaults.World.Generate(f, seed)
		if v, _ := lootprops.Judge(lootfaults.Run(firstTime{}, s, engine.RunOptions{})).Verdict(lootfaults.Properties.RuleOrder); v.Outcome == engine.Fails {
			return
		}
	}
	t.Errorf("no schedule of %s seeds 1..%d fails RuleOrder for the first-time design (go test -run '^TestFirstTimeFailsIntentChange$' ./props/loot/)", f, n)
}

// firstTime is tiny with source 004's upsert: a claim on record takes the
// new intent and keeps its time (ON DUPLICATE KEY UPDATE leaves
// created_at), so a row's time is its first appearance whatever it says
// now.
type firstTime struct{}

func (firstTime) Name() string { return "first-time" }

func (firstTime) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return firstTimeCluster{tiny{name: "first-time"}.NewCluster(db).(*tinyCluster)}
}

type firstTimeCluster struct{ *tinyCluster }

func (c firstTimeCluster) NewNode(id int, env lootfaults.Env) lootfaults.Node {
	return firstTimeNode{tinyNode{c.tinyCluster, env}}
}

type firstTimeNode struct{ tinyNode }

func (n firstTimeNode) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	if r.Kind != lootfaults.Kinds.ClaimItem {
		return n.tinyNode.Handle(now, r)
	}
	return n.store("claim", r.Session, func(x *tinySession, now time.Time) engine.Ack {
		if x == nil || x.status != lootfaults.Statuses.Claiming || !now.Before(x.spec.Deadline) || !slices.Contains(x.spec.Members, r.Player) {
			return lootfaults.Refused
		}
		if i := slices.IndexFunc(x.claims, func(c lootfaults.Claim) bool { return c.Player == r.Player }); i >= 0 {
			x.claims[i].Intent = r.Intent // created_at kept
			return lootfaults.Accepted
		}
		x.claims = append(x.claims, lootfaults.Claim{Player: r.Player, Intent: r.Intent, At: now, Fair: n.env.Wins(r.Player)})
		slices.SortFunc(x.claims, func(a, b lootfaults.Claim) int { return cmp.Compare(a.Player, b.Player) })
		return lootfaults.Accepted
	})
}
