package props_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/props"
)

// watermillDedup is watermill's Deduplicator middleware (v1.5.1), unmodified,
// in front of a handler that credits the settlement: the "exactly once"
// many Go services put in front of a handler. Its repository is the
// library's own in-memory one (NewMapExpiringKeyRepository), one per node:
// the library says it "cannot be shared or synchronized between instances",
// so it is a node's memory, lost with the node. Its ttl is faults.WindowTTL,
// the window the settlement families are built around.
type watermillDedup struct{ decl faults.Declaration }

func (watermillDedup) Name() string                  { return "watermill-dedup" }
func (d watermillDedup) Declare() faults.Declaration { return d.decl }
func (watermillDedup) NewCluster() faults.Cluster    { return watermillCluster{} }
func (watermillCluster) NewNode(_ int, env faults.Env) faults.Node {
	repo, err := middleware.NewMapExpiringKeyRepository(faults.WindowTTL)
	if err != nil {
		panic(err)
	}
	n := &watermillNode{env: env}
	d := &middleware.Deduplicator{
		// SHA-256 of the whole payload: no false duplicates from
		// the default Adler-32's collisions on short payloads.
		KeyFactory: middleware.NewMessageHasherSHA256(math.MaxInt64),
		Repository: repo,
	}
	n.handle = d.Middleware(n.credit)
	return n
}

type watermillCluster struct{}

// watermillNode hands each delivery to the middleware as a message whose
// payload is the settlement's business identity, and learns from its
// handler whether the middleware let the message through. The delivery
// rides in the message's context, so a node takes concurrent calls
// (in-node) as a subscriber's handler does.
type watermillNode struct {
	env    faults.Env
	handle message.HandlerFunc
}

// watermillCall is one delivery in flight, in its message's context.
type watermillCall struct {
	s       faults.Settlement
	handled bool
}

type watermillCallKey struct{}

func (n *watermillNode) Deliver(_ time.Time, s faults.Settlement) (faults.Ack, error) {
	c := &watermillCall{s: s}
	key := fmt.Sprintf("%d/%d/%d", s.Player, s.Match, s.Kind)
	msg := message.NewMessage(key, []byte(key))
	msg.SetContext(context.WithValue(msg.Context(), watermillCallKey{}, c))
	if _, err := n.handle(msg); err != nil {
		return faults.Nack, err
	}
	if !c.handled {
		return faults.AckDuplicate, nil // the middleware dropped it
	}
	return faults.AckCredited, nil
}

func (n *watermillNode) credit(msg *message.Message) ([]*message.Message, error) {
	c := msg.Context().Value(watermillCallKey{}).(*watermillCall)
	c.handled = true
	_, err := n.env.Credit("", c.s, c.s.Room)
	return nil, err
}

// watermillDeclared is what the middleware's code derives, family by
// family (middleware/deduplicator.go, v1.5.1):
var watermillDeclared = faults.Declaration{
	Doc: "watermill's Deduplicator middleware with its own in-memory repository (ttl faults.WindowTTL), one per node, unmodified.",
	Fails: []faults.Expect{
		{Families: watermillFamilies, Props: []faults.Property{faults.Properties.Responsive},
			Why: "NewMapExpiringKeyRepository starts cleanOutLoop(context.Background(), ticker): nothing can stop it, so every node a run builds leaves one goroutine behind"},
		{Families: []faults.Family{faults.Families.WindowExpiry, faults.Families.DeepReplay}, Props: []faults.Property{faults.Properties.NoDup},
			Why: "a copy that arrives after the ttl and the cleanup tick after it (window/2 later) finds no tag and is handed to the handler again"},
		{Families: []faults.Family{faults.Families.Crash}, Props: []faults.Property{faults.Properties.NoDup},
			Why: "the tags are the node's memory: a crash after the credit, before the ack, loses them, and the retry is credited again"},
		{Families: []faults.Family{faults.Families.TimeoutSuccess}, Props: []faults.Property{faults.Properties.NoDup},
			Why: "the credit landed and reported a timeout; the slow sender's retry comes a minute later, long after the 2.5 s ttl dropped the tag, and is credited again"},
		{Families: []faults.Family{faults.Families.StoreError}, Props: []faults.Property{faults.Properties.NoLoss, faults.Properties.HonestAck},
			Why: "IsDuplicate tags the message before the handler runs and keeps the tag when the handler fails: the retry of a failed credit is dropped as a duplicate and answered as delivered, never credited"},
		{Families: []faults.Family{faults.Families.InNode}, Props: []faults.Property{faults.Properties.HonestAck},
			Why: "IsDuplicate checks and tags under one lock, so two calls at once on a node are never both handled; but it tags before the handler credits: the second call, dropped meanwhile, is answered as delivered before the first call's credit lands"},
	},
}

// watermillFamilies are the families the test runs: the two it must hold
// (clean, duplicate) and those whose failures are a ttl dedup's.
var watermillFamilies = []faults.Family{faults.Families.Clean, faults.Families.Duplicate, faults.Families.WindowExpiry,
	faults.Families.DeepReplay, faults.Families.Crash, faults.Families.TimeoutSuccess, faults.Families.StoreError, faults.Families.InNode}

// The kit judges the library as it runs in production only because its
// clock is the world's: with wall time, which barely moves during a run,
// the 2.5 s ttl never ends and window-expiry, deep-replay and
// timeout-after-success all held. StrictExpectations: every declared
// failure must show, and nothing else may fail (clean and duplicate hold
// every property but Responsive). The declared failures first show at
// seeds 31 (window-expiry: the cleanup tick keeps a tag up to half a ttl
// past it, so only the family's later copies land beyond), 12
// (store-error), 6 (timeout-after-success) and 1 (the others), measured
// from seed 1: 100 schedules for window-expiry and 40 for the rest keep a
// 3x margin. No more: every run leaks, and each leak costs a dump of every
// goroutine of the process, the earlier runs' leaks included.
func TestWatermillDeduplicatorFailsAsATTLDedup(t *testing.T) {
	d := watermillDedup{watermillDeclared}
	t.Run("expiry", func(t *testing.T) {
		props.TestDesign(t, d, props.Dir(t.TempDir()), props.Families(faults.Families.WindowExpiry), props.Schedules(100, 1), props.StrictExpectations())
	})
	t.Run("rest", func(t *testing.T) {
		rest := slices.DeleteFunc(slices.Clone(watermillFamilies), func(f faults.Family) bool { return f == faults.Families.WindowExpiry })
		props.TestDesign(t, d, props.Dir(t.TempDir()), props.Families(rest...), props.Schedules(40, 1), props.StrictExpectations())
	})
}

// A run in a bubble is a function of its schedule even with the library's
// cleanup goroutine ticking beside the design: what a tick wakes at a
// delivery's instant runs before the delivery (without that order, copies
// landing on a cleanup tick were dropped or credited as the scheduler
// chose, and window-expiry's verdict changed from one go test to the
// next). Three runs of each of window-expiry's first 100 seeds: with the
// runner's synctest.Wait taken out, each of 3 go tests caught 2 to 4
// seeds whose runs differ (with 40 seeds and two runs each, 1 in 3 did).
func TestWatermillRunsReplayInABubble(t *testing.T) {
	var d faults.Design = watermillDedup{watermillDeclared}
	for seed := uint64(1); seed <= 100; seed++ {
		s := props.World.Generate(faults.Families.WindowExpiry, seed)
		a := engine.RunInBubble(t, props.World, d, s, faults.RunOptions{})
		for range 2 {
			if b := engine.RunInBubble(t, props.World, d, s, faults.RunOptions{}); !reflect.DeepEqual(a.Events, b.Events) {
				t.Errorf("window-expiry seed %d: two runs in a bubble differ\nreproduce: go test ./props -run TestWatermillRunsReplayInABubble", seed)
				break
			}
		}
	}
}

// Foreign code is proved as it runs in production: wrap it, unmodified,
// in a design (watermillDedup hands each delivery to watermill's
// middleware and credits in its handler) and call the kit. Inside
// TestDesign its time.Now and tickers read the world's clock, and the
// goroutines it leaves behind fail Responsive with their stacks (see
// README, "Wrapping foreign code").
func ExampleTestDesign_thirdParty() {
	testWatermill := func(t *testing.T) {
		props.TestDesign(t, watermillDedup{watermillDeclared},
			props.Families(faults.Families.Clean, faults.Families.WindowExpiry),
			props.StrictExpectations(),
		)
	}
	_ = testWatermill // in your _test.go file: func TestWatermill(t *testing.T) { ... }
}
