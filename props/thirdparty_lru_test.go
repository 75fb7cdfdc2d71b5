package props_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

// lruDedup is golang-lru's expirable LRU (v2.0.7), unmodified, used as a
// dedup the way its README suggests a cache with a ttl is used: Get the
// settlement's identity, and on a miss credit it and Add it. One cache per
// node, ttl faults.WindowTTL, size lruSize: it is the node's memory, lost
// with the node, and the credit is unkeyed (a dedup in front of a handler
// has no grant key to give the sink).
type lruDedup struct{}

// lruSize is far above what any schedule keeps within a ttl (a few dozen
// settlements; long-history's deep schedule 8,192 in all, of which a ttl
// holds a handful), so the cache forgets by ttl only, never by size: the
// test judges a ttl dedup, not an LRU's capacity.
const lruSize = 1 << 16

func (lruDedup) Name() string                { return "golang-lru-expirable" }
func (lruDedup) Declare() faults.Declaration { return lruDeclared }
func (lruDedup) NewCluster() faults.Cluster  { return lruCluster{} }

type lruCluster struct{}

func (lruCluster) NewNode(_ int, env faults.Env) faults.Node {
	return &lruNode{env: env, seen: expirable.NewLRU[string, struct{}](lruSize, nil, faults.WindowTTL)}
}

type lruNode struct {
	env  faults.Env
	seen *expirable.LRU[string, struct{}]
}

func (n *lruNode) Deliver(_ time.Time, s faults.Settlement) (faults.Ack, error) {
	key := fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind)
	if _, ok := n.seen.Get(key); ok {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit("", s, s.Room); err != nil {
		return faults.Nack, err
	}
	n.seen.Add(key, struct{}{})
	return faults.AckCredited, nil
}

// lruDeclared is what the library's code derives (expirable/expirable_lru.go,
// v2.0.7), family by family. Get answers a miss for an entry whose
// ExpiresAt (time.Now()+ttl at its Add) is past, and the cleanup removes a
// bucket only once its newest entry expired: the cache forgets exactly at
// the ttl, on the world's clock inside the kit's bubble.
var lruDeclared = faults.Declaration{
	Doc: "golang-lru's expirable LRU (ttl faults.WindowTTL, size 65,536) as a per-node dedup in front of an unkeyed credit, unmodified: Get, credit on a miss, Add.",
	Fails: []faults.Expect{
		{Families: []faults.Family{faults.Families.Clean, faults.Families.Duplicate, faults.Families.StoreError}, Props: []faults.Property{faults.Properties.Responsive},
			Why: "NewLRU starts the cleanup goroutine with a done channel nothing closes (the library says so: a Close comes after v2), so every node a run builds leaves it behind; " +
				"the rest holds: a copy inside the ttl finds its entry, and a failed credit adds nothing, so its retry credits it"},
		{Families: []faults.Family{faults.Families.WindowExpiry, faults.Families.DeepReplay}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.Responsive},
			Why: "a copy that arrives after the ttl finds its entry expired and is credited again; and the cleanup goroutine leaks, as everywhere"},
		{Families: []faults.Family{faults.Families.Crash}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.Responsive},
			Why: "the cache is the node's memory: a crash after the credit, before the Add or the ack, loses it, and the retry is credited again; and the cleanup goroutine leaks"},
		{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.Responsive},
			Why: "the credit landed and reported a timeout, so nothing was added, and the retry credits again; and the cleanup goroutine leaks"},
		{Families: []faults.Family{faults.Families.MultiNode}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.Responsive},
			Why: "a copy on another node meets that node's own cache, which never saw it; and the cleanup goroutine leaks"},
		{Families: []faults.Family{faults.Families.InNode}, Props: []faults.Property{faults.Properties.NoDup, faults.Properties.Responsive},
			Why: "the cache is safe for concurrent use, but Get, credit and Add are three calls: two calls of one node at once both miss the Get and both credit; and the cleanup goroutine leaks"},
	},
}

// TestGolangLRUExpirableFailsAsATTLDedup: the library fails what a ttl-only
// in-memory dedup must fail and holds clean, duplicate and store-error but
// for its leaked goroutine, with StrictExpectations (every declared
// failure must show, nothing else may fail). The budget is small for the
// reason watermill's is: every run leaks, and each leak costs a dump of
// every goroutine of the process. The declared NoDup shows from seed 1 in
// every family but timeout-after-success, where it shows first at seed 6
// (then 9, 12; measured from seed 1): 40 schedules keep more than a 3x
// margin. The nodes have no Recover, so a run whose sends were all acked
// does not sleep to the drain, and the cleanup ticker (ttl/100 = 25 ms)
// is spared the drain's hour: 144,000 wakes a node, 2.6 s of CPU for 20
// clean runs where they now cost 13 ms (measured at load 25).
func TestGolangLRUExpirableFailsAsATTLDedup(t *testing.T) {
	props.TestDesign(t, lruDedup{}, props.Dir(t.TempDir()), props.Schedules(40, 1), props.StrictExpectations(),
		props.Families(faults.Families.Clean, faults.Families.Duplicate, faults.Families.WindowExpiry, faults.Families.DeepReplay,
			faults.Families.Crash, faults.Families.TimeoutSuccess, faults.Families.StoreError, faults.Families.MultiNode, faults.Families.InNode))
}
