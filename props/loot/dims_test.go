package lootprops_test

import (
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

// The dimensions no family varied before shared-loot, team-change and
// fair-change (issue 26, "dimensions that never vary"): one tiny design
// broken in each, which every family that existed before holds (the
// dimension never varies there, so the bug cannot show) and its own family
// fails, with the property that names the harm.

// dimsEscapes are the families that existed before the three, those
// without faults: tiny has no recovery, so in a fault family it loses
// items whatever else it does.
var dimsEscapes = []engine.Family{
	lootfaults.Families.Clean, lootfaults.Families.DuplicateClaim, lootfaults.Families.ConcurrentSettle, lootfaults.Families.EarlySettle,
	lootfaults.Families.LateClaim, lootfaults.Families.ClockSkew, lootfaults.Families.CancelRace, lootfaults.Families.Outsider,
	lootfaults.Families.Ties, lootfaults.Families.Quantity,
}

// dimsRuns is how many schedules each check runs. The rarest catch of the
// four designs is tiny-cached-wins', 7 runs in 100 (go test -run TestDims
// -v prints each rate): a generator change that kept that rate would miss
// it in 100 runs with probability (93/100)^100 ~ 7e-4.
const dimsRuns = 100

// judgeSeeds runs d on seeds 1..dimsRuns of family f and returns, per
// failed property, the first seed that failed it and how many did.
func judgeSeeds(d lootfaults.Design, f engine.Family) map[engine.Property][2]int {
	out := map[engine.Property][2]int{}
	for seed := uint64(1); seed <= dimsRuns; seed++ {
		s := lootfaults.World.Generate(f, seed)
		for _, p := range lootprops.Judge(lootfaults.Run(d, s, engine.RunOptions{})).Failed() {
			c := out[p]
			if c[1] == 0 {
				c[0] = int(seed)
			}
			c[1]++
			out[p] = c
		}
	}
	return out
}

// checkDimension: d fails nothing in the families of dimsEscapes that tiny
// does not fail there too (tiny's own limits: its cancel and its clock),
// run for run, and fails one of want in family f.
func checkDimension(t *testing.T, d lootfaults.Design, f engine.Family, want ...engine.Property) {
	t.Helper()
	for _, g := range dimsEscapes {
		base := tinyVerdicts(g)
		for p, c := range judgeSeeds(d, g) {
			if base[p] != c {
				t.Errorf("%s fails %s under %s (%d of %d runs, first seed %d; tiny: %d runs), where its dimension never varies: its break is not the only one (replay: lootfaults.World.Generate(%q, %d))", d.Name(), p, g, c[1], dimsRuns, c[0], base[p][1], g, c[0])
			}
		}
	}
	got := judgeSeeds(d, f)
	caught := false
	for _, p := range want {
		if c, ok := got[p]; ok {
			caught = true
			t.Logf("%s under %s fails %s in %d of %d runs (first seed %d)", d.Name(), f, p, c[1], dimsRuns, c[0])
		}
	}
	if !caught {
		t.Errorf("%s under %s fails %v in seeds 1..%d, want one of %v (go test -run '^%s$' ./props/loot/)", d.Name(), f, slices.Collect(mapKeys(got)), dimsRuns, want, t.Name())
	}
	if base := tinyVerdicts(f); len(base) > 0 {
		t.Errorf("tiny itself fails %v under %s: the catch is not the break's alone", slices.Collect(mapKeys(base)), f)
	}
}

// tinyVerdicts is judgeSeeds of tiny under f, computed once per family for
// the four checks.
func tinyVerdicts(f engine.Family) map[engine.Property][2]int {
	tinyMu.Lock()
	defer tinyMu.Unlock()
	if v, ok := tinyMemo[f]; ok {
		return v
	}
	v := judgeSeeds(tiny{name: "tiny"}, f)
	tinyMemo[f] = v
	return v
}

var (
	tinyMu   sync.Mutex
	tinyMemo = map[engine.Family]map[engine.Property][2]int{}
)

func mapKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestDimsSharedLootCatchesAGrantKeyWithoutTheSession: tiny delivering
// under player:loot instead of session:player:loot (source 004's grant_no).
// Each session dropping its own code, the key is as unique as the
// session's; once two sessions drop one code, the second win of a player
// is a key the inventory already applied: the item never arrives.
func TestDimsSharedLootCatchesAGrantKeyWithoutTheSession(t *testing.T) {
	checkDimension(t, rekeyed{}, lootfaults.Families.SharedLoot, lootfaults.Properties.NoLostGrant, lootfaults.Properties.NoDupGrant)
}

// TestDimsTeamChangeCatchesACachedTeam: tiny judging claims against the
// first team snapshot any session of the cluster took, instead of each
// session's own (source 004's §5). With one team for the whole run it is
// the same snapshot; once the team changes, a member who left is let in
// and a newcomer is refused.
func TestDimsTeamChangeCatchesACachedTeam(t *testing.T) {
	checkDimension(t, cachedTeam{}, lootfaults.Families.TeamChange, lootfaults.Properties.MembersOnly, lootfaults.Properties.HonestAnswer)
}

// TestDimsFairChangeCatchesWinsCachedAcrossSessions: tiny keeping each
// player's first fairness read for the rest of the run. With a constant
// record that is the record; once it counts wins, the first session's
// winner keeps its old count in the second and ranks too high.
func TestDimsFairChangeCatchesWinsCachedAcrossSessions(t *testing.T) {
	checkDimension(t, cachedWins{}, lootfaults.Families.FairChange, lootfaults.Properties.RuleOrder)
}

// TestDimsFairChangeCatchesASnapshotOfAnotherRead: tiny ranking by the
// fairness it read at each claim, then writing an audit snapshot with the
// fairness it reads again after delivering. With a constant record the two
// reads agree; once the record changes in between (the winner's own win,
// a change at the freeze) the snapshot replays to other winners.
func TestDimsFairChangeCatchesASnapshotOfAnotherRead(t *testing.T) {
	checkDimension(t, rereadSnapshot{}, lootfaults.Families.FairChange, lootfaults.Properties.Replayable)
}

// TestDimsRuleOrderRanksByTheRecordAtSettleTime: the oracle's fairness is
// the record as of one moment of the settle (checkRuleOrder's doc). Three
// NEED claims, of players 1 (0 wins), 2 and 3 (1 win each), then player
// 1's record goes up by 2 at the freeze: ranking by the freeze's record (1
// wins: tiny reads at the claims) and by the record read after it (2 wins
// first, the earlier of the two on 1: the reference reads after the
// freeze) both hold; ranking by a record the run never had at the settle
// (3 wins: tiny reading 5 more wins for players 1 and 2) fails.
func TestDimsRuleOrderRanksByTheRecordAtSettleTime(t *testing.T) {
	s := session(lootfaults.Families.FairChange)
	s.Fairness = []lootfaults.Fair{{Player: 2, Wins: 1}, {Player: 3, Wins: 1}}
	s.Sessions[0].Bumps = []lootfaults.Fair{{Player: 1, Wins: 2}}
	s.Requests = append(s.Requests, lootfaults.Request{ID: 5, Kind: lootfaults.Kinds.ClaimItem, Player: 3, Intent: lootfaults.Intents.Need})
	d := s.Deliveries
	s.Deliveries = append(d[:len(d)-1:len(d)-1], engine.Delivery{At: 3 * time.Second, Msg: 5}, d[len(d)-1])
	for _, c := range []struct {
		d       lootfaults.Design
		winners []lootfaults.PlayerID
		holds   bool
	}{
		{tiny{name: "tiny"}, []lootfaults.PlayerID{1}, true},
		{lootref.Design{}, []lootfaults.PlayerID{2}, true},
		{offsetWins{map[lootfaults.PlayerID]int64{1: 5, 2: 5}}, []lootfaults.PlayerID{3}, false},
	} {
		h := lootfaults.Run(c.d, s, engine.RunOptions{})
		r := lootprops.Judge(h)
		v, _ := r.Verdict(lootfaults.Properties.RuleOrder)
		if (v.Outcome == engine.Holds) != c.holds {
			t.Errorf("%s: RuleOrder %v, want holds %t:\n%s", c.d.Name(), v, c.holds, lootfaults.World.Format(s))
		}
		if got := lastGranted(h); !slices.Equal(got, c.winners) {
			t.Errorf("%s granted %v, want %v (the test's premise):\n%v", c.d.Name(), got, c.winners, r)
		}
	}
}

// lastGranted is the last record's grants of x0 in h.
func lastGranted(h lootfaults.History) []lootfaults.PlayerID {
	var out []lootfaults.PlayerID
	for _, e := range h.Events {
		if e.Kind == lootfaults.Events.View && e.Detail.Session == 0 {
			out = e.Detail.Record.Granted
		}
	}
	return out
}

// rekeyed is tiny delivering under player:loot.
type rekeyed struct{}

func (rekeyed) Name() string { return "tiny-player-loot-key" }
func (rekeyed) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return envCluster{tiny{name: "tiny"}.NewCluster(db), func(e lootfaults.Env) lootfaults.Env { return playerLootKey{e} }}
}

type playerLootKey struct{ lootfaults.Env }

func (e playerLootKey) Deliver(_ string, it lootfaults.Item) (bool, error) {
	return e.Env.Deliver(fmt.Sprintf("%d:%s", it.Player, it.Loot), it)
}

// envCluster is a cluster whose nodes see their Env through wrap.
type envCluster struct {
	lootfaults.Cluster
	wrap func(lootfaults.Env) lootfaults.Env
}

func (c envCluster) NewNode(id int, env lootfaults.Env) lootfaults.Node {
	return c.Cluster.NewNode(id, c.wrap(env))
}

// cachedTeam is tiny whose every open is handed the first team snapshot
// the cluster saw (a team cache shared by its nodes, as a cache service
// would be) instead of the session's.
type cachedTeam struct{}

func (cachedTeam) Name() string { return "tiny-cached-team" }
func (cachedTeam) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &teamCacheCluster{Cluster: tiny{name: "tiny"}.NewCluster(db)}
}

type teamCacheCluster struct {
	lootfaults.Cluster
	mu   sync.Mutex
	team []lootfaults.PlayerID
}

func (c *teamCacheCluster) NewNode(id int, env lootfaults.Env) lootfaults.Node {
	return teamCacheNode{c.Cluster.NewNode(id, env), c}
}

type teamCacheNode struct {
	lootfaults.Node
	c *teamCacheCluster
}

func (n teamCacheNode) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	if r.Kind == lootfaults.Kinds.OpenSession {
		n.c.mu.Lock()
		if n.c.team == nil {
			n.c.team = slices.Clone(r.Spec.Members)
		}
		spec := *r.Spec
		spec.Members = slices.Clone(n.c.team)
		r.Spec = &spec
		n.c.mu.Unlock()
	}
	return n.Node.Handle(now, r)
}

// cachedWins is tiny whose fairness reads are cached per player for the
// whole run, across sessions.
type cachedWins struct{}

func (cachedWins) Name() string { return "tiny-cached-wins" }
func (cachedWins) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	cache := &winsCache{wins: map[lootfaults.PlayerID]int64{}}
	return envCluster{tiny{name: "tiny"}.NewCluster(db), func(e lootfaults.Env) lootfaults.Env { return cachingEnv{e, cache} }}
}

type winsCache struct {
	mu   sync.Mutex
	wins map[lootfaults.PlayerID]int64
}

type cachingEnv struct {
	lootfaults.Env
	c *winsCache
}

func (e cachingEnv) Wins(p lootfaults.PlayerID) int64 {
	e.c.mu.Lock()
	defer e.c.mu.Unlock()
	w, ok := e.c.wins[p]
	if !ok {
		w = e.Env.Wins(p)
		e.c.wins[p] = w
	}
	return w
}

// rereadSnapshot is tiny that, once a settle is answered accepted, writes
// an audit snapshot (one store call) of the session's claims with the
// fairness read again, and its winners.
type rereadSnapshot struct{}

func (rereadSnapshot) Name() string { return "tiny-reread-snapshot" }
func (rereadSnapshot) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return &snapCluster{Cluster: tiny{name: "tiny"}.NewCluster(db), snaps: map[string]*lootfaults.Snapshot{}}
}

type snapCluster struct {
	lootfaults.Cluster
	mu    sync.Mutex
	snaps map[string]*lootfaults.Snapshot
}

func (c *snapCluster) Read(no string) lootfaults.Record {
	rec := c.Cluster.Read(no)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.snaps[no]; s != nil {
		cp := *s
		rec.Snapshot = &cp
	}
	return rec
}

func (c *snapCluster) NewNode(id int, env lootfaults.Env) lootfaults.Node {
	return snapNode{c.Cluster.NewNode(id, env), c, env}
}

type snapNode struct {
	lootfaults.Node
	c   *snapCluster
	env lootfaults.Env
}

func (n snapNode) Handle(now time.Time, r lootfaults.Req) (engine.Ack, error) {
	a, err := n.Node.Handle(now, r)
	if err != nil || r.Kind != lootfaults.Kinds.SettleNow || a != lootfaults.Accepted {
		return a, err
	}
	rec := n.c.Cluster.Read(r.Session)
	claims := slices.Clone(rec.Claims)
	for i := range claims {
		claims[i].Fair = n.env.Wins(claims[i].Player)
	}
	return a, n.env.Store("snapshot", func() error {
		n.c.mu.Lock()
		defer n.c.mu.Unlock()
		n.c.snaps[r.Session] = &lootfaults.Snapshot{Claims: claims, Winners: slices.Clone(rec.Granted)}
		return nil
	})
}

// offsetWins is tiny reading offset more wins than the record has.
type offsetWins struct{ offset map[lootfaults.PlayerID]int64 }

func (offsetWins) Name() string { return "tiny-offset-wins" }
func (d offsetWins) NewCluster(db lootfaults.Clock) lootfaults.Cluster {
	return envCluster{tiny{name: "tiny"}.NewCluster(db), func(e lootfaults.Env) lootfaults.Env { return offsetEnv{e, d.offset} }}
}

type offsetEnv struct {
	lootfaults.Env
	offset map[lootfaults.PlayerID]int64
}

func (e offsetEnv) Wins(p lootfaults.PlayerID) int64 { return e.Env.Wins(p) + e.offset[p] }
