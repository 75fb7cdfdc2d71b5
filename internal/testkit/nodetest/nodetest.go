// Package nodetest runs several settler nodes against one shared store and
// checks exactly-once on the sink's ledger: the multi-node test of every real
// store (ref/postgres, ref/redis). Each node is a ref.Settler with its own
// Window, as separate processes would have; deliveries of each settlement
// are repeated, routed to different nodes, sometimes all at once from
// different goroutines, and a failed delivery is retried on the next node,
// as a load balancer would.
package nodetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// Grant is one ledger entry: a key the sink applied, with its payload. A key
// appearing twice is a double credit.
type Grant struct {
	Key     ref.Key
	Payload []byte
}

// Config describes one run.
type Config struct {
	// Nodes settle deliveries; each must own delivery (ref.WithSink) and
	// share the store and sink's database with the others.
	Nodes []*ref.Settler
	// Settlements is how many distinct settlements are sent.
	Settlements int
	// Copies is how many times each is delivered (the sender's retries and
	// the transport's duplicates).
	Copies int
	// Goroutines deliver concurrently.
	Goroutines int
	// Seed fixes the routing and the delivery order.
	Seed uint64
	// Fault, if set, runs once when half the deliveries are done (for
	// example, cut one node's network: its later calls fail and the sender
	// retries them on other nodes, and Recover completes what it claimed).
	Fault func()
	// Ledger reads every grant the sink applied.
	Ledger func(ctx context.Context) ([]Grant, error)
	_      struct{}
}

// base is the virtual clock's origin; delivery j happens at base + j ms.
var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// maxAttempts bounds a delivery's retries across nodes. With one node cut,
// every other attempt can fail; 4 per node is far more than routing needs.
func maxAttempts(nodes int) int { return 4 * nodes }

type delivery struct {
	j, settlement int
}

// Key returns the key of settlement i (what the ledger is checked by).
func Key(i int) ref.Key { return ref.KeyOf(0x3a17, uint64(i)) }

func payload(i int) []byte { return []byte(fmt.Sprintf("settlement-%d", i)) }

// Run delivers cfg.Settlements x cfg.Copies deliveries and checks that every
// settlement was acked and credited exactly once with its own payload.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	n := len(cfg.Nodes)
	if n == 0 || cfg.Settlements < 1 || cfg.Copies < 1 || cfg.Goroutines < 1 || cfg.Ledger == nil {
		t.Fatalf("nodetest.Run: invalid config (nodes %d, settlements %d, copies %d, goroutines %d, ledger set %v)",
			n, cfg.Settlements, cfg.Copies, cfg.Goroutines, cfg.Ledger != nil)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	// Every other settlement's copies are consecutive in the order, so the
	// goroutines take them at the same moment (concurrent duplicates); the
	// rest are spread out (retries, late replays).
	var order []delivery
	var spread []int
	for i := range cfg.Settlements {
		if i%2 == 0 {
			for range cfg.Copies {
				order = append(order, delivery{settlement: i})
			}
			continue
		}
		for range cfg.Copies {
			spread = append(spread, i)
		}
	}
	rng.Shuffle(len(spread), func(a, b int) { spread[a], spread[b] = spread[b], spread[a] })
	mixed := make([]delivery, 0, len(order)+len(spread))
	for len(order) > 0 || len(spread) > 0 {
		if len(order) > 0 && (len(spread) == 0 || rng.IntN(2) == 0) {
			k := min(cfg.Copies, len(order))
			mixed = append(mixed, order[:k]...)
			order = order[k:]
			continue
		}
		mixed = append(mixed, delivery{settlement: spread[0]})
		spread = spread[1:]
	}
	for j := range mixed {
		mixed[j].j = j
	}
	first := make([]int, len(mixed)) // the node each delivery goes to first
	for j := range first {
		first[j] = rng.IntN(n)
	}

	var (
		mu     sync.Mutex
		acked  = make([]bool, cfg.Settlements)
		fresh  = make([]int, cfg.Settlements)
		failed []string
		errs   int // failed attempts (retried on another node)
		wg     sync.WaitGroup
		work   = make(chan delivery)
		once   sync.Once
	)
	ctx := context.Background()
	for range cfg.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := range work {
				now := base.Add(time.Duration(d.j) * time.Millisecond)
				var lastErr error
				ok := false
				for a := range maxAttempts(n) {
					node := (first[d.j] + a) % n
					res, err := cfg.Nodes[node].Apply(ctx, Key(d.settlement), payload(d.settlement), now)
					if err != nil {
						lastErr = err
						mu.Lock()
						errs++
						mu.Unlock()
						continue
					}
					mu.Lock()
					acked[d.settlement] = true
					if res.Fresh {
						fresh[d.settlement]++
					}
					mu.Unlock()
					ok = true
					break
				}
				if !ok {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("delivery %d of settlement %d: %v", d.j, d.settlement, lastErr))
					mu.Unlock()
				}
			}
		}()
	}
	for j, d := range mixed {
		if cfg.Fault != nil && j == len(mixed)/2 {
			once.Do(cfg.Fault)
		}
		work <- d
	}
	close(work)
	wg.Wait()

	reproduce := fmt.Sprintf("reproduce: go test -race -count=1 -run '^%s$' <this package>", t.Name())
	t.Logf("%d deliveries on %d nodes, %d failed attempts retried elsewhere", len(mixed), n, errs)
	if cfg.Fault != nil && errs == 0 {
		t.Errorf("the fault made no delivery fail: the test no longer exercises retries across nodes; %s", reproduce)
	}
	for _, f := range failed {
		t.Errorf("not acked after %d attempts: %s; %s", maxAttempts(n), f, reproduce)
	}
	// Recover on every node, long after every lease: completes what a cut
	// node claimed and never delivered. Nodes that are cut fail here; one
	// live node is enough.
	later := base.Add(time.Hour)
	recovered := false
	for i, node := range cfg.Nodes {
		if _, err := node.Recover(ctx, later); err != nil {
			t.Logf("Recover on node %d: %v (expected only on a cut node)", i, err)
			continue
		}
		recovered = true
	}
	if !recovered {
		t.Fatalf("Recover failed on every node; %s", reproduce)
	}
	ledger, err := cfg.Ledger(ctx)
	if err != nil {
		t.Fatalf("reading the ledger: %v; %s", err, reproduce)
	}
	credits := make(map[ref.Key]int, len(ledger))
	for _, g := range ledger {
		credits[g.Key]++
	}
	for i := range cfg.Settlements {
		k := Key(i)
		switch c := credits[k]; {
		case c == 0:
			t.Errorf("settlement %d (key %v) never credited (acked=%v): a lost settlement; %s", i, k, acked[i], reproduce)
		case c > 1:
			t.Errorf("settlement %d (key %v) credited %d times: a double credit; %s", i, k, c, reproduce)
		}
		if !acked[i] {
			t.Errorf("settlement %d never acked", i)
		}
		if fresh[i] > 1 {
			t.Errorf("settlement %d: %d Apply calls reported Fresh; a key is claimed once; %s", i, fresh[i], reproduce)
		}
		delete(credits, k)
	}
	for k, c := range credits {
		t.Errorf("ledger holds %d credit(s) for key %v, which no settlement has; %s", c, k, reproduce)
	}
	index := make(map[ref.Key]int, cfg.Settlements)
	for i := range cfg.Settlements {
		index[Key(i)] = i
	}
	for _, g := range ledger {
		if i, ok := index[g.Key]; ok && string(g.Payload) != string(payload(i)) {
			t.Errorf("settlement %d credited with payload %q, want %q; %s", i, g.Payload, payload(i), reproduce)
		}
	}
}
