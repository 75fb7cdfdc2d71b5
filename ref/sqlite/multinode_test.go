package sqlite

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref"
)

// TestManyNodesShareOneFile: four settler nodes, each with its own window
// and its own handles (as four processes would have), share one SQLite
// file. Every request is sent four times, the copies routed to seeded random
// nodes and racing on 32 goroutines; half the nodes use the atomic sink and
// half the separate one, half batch their claims. Every request must be
// credited exactly once.
func TestManyNodesShareOneFile(t *testing.T) {
	const (
		nodes      = 4
		requests   = 48
		copies     = 4  // the sender's retries
		goroutines = 32 // concurrent deliveries in flight
		seed       = 1
	)
	path := filepath.Join(t.TempDir(), "shared.db")
	settlers := make([]*ref.Settler, nodes)
	var audit *Store
	for i := range settlers {
		// Nodes 2 and 3 batch their claims: batched and unbatched nodes
		// must agree on one file.
		s, err := OpenWith(path, Options{Batch: i >= 2})
		if err != nil {
			t.Fatalf("OpenWith: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		audit = s
		credit := creditEffect(t, s.DB())
		sink := s.Sink(credit)
		if i%2 == 1 {
			var err error
			if sink, err = OpenSink(path, credit); err != nil {
				t.Fatalf("OpenSink: %v", err)
			}
			t.Cleanup(func() { sink.Close() })
		}
		settlers[i] = ref.NewSettler(ref.NewWindow(time.Minute, 4), s, ref.WithSink(sink))
	}

	type send struct{ req, node int }
	rng := rand.New(rand.NewPCG(seed, 0))
	var sends []send
	for r := 0; r < requests; r++ {
		for c := 0; c < copies; c++ {
			sends = append(sends, send{r, rng.IntN(nodes)})
		}
	}
	rng.Shuffle(len(sends), func(i, j int) { sends[i], sends[j] = sends[j], sends[i] })

	work := make(chan send)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		fresh = make([]int, requests)
	)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				now := crashBase.Add(time.Duration(s.req) * time.Millisecond)
				res, err := settlers[s.node].Apply(t.Context(), crashKey(s.req), crashPayload(s.req), now)
				mu.Lock()
				if err != nil {
					errs = append(errs, fmt.Errorf("request %d on node %d: %w", s.req, s.node, err))
				} else if res.Fresh {
					fresh[s.req]++
				}
				mu.Unlock()
			}
		}()
	}
	for _, s := range sends {
		work <- s
	}
	close(work)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("reproduce: go test -race -count=1 -run '^TestManyNodesShareOneFile$' ./ref/sqlite\n%v", err)
	}
	for r, n := range fresh {
		if n != 1 {
			t.Errorf("request %d reported Fresh by %d of its %d sends, want exactly 1", r, n, copies)
		}
	}
	v := &verifier{store: audit, sink: audit.Sink(nil)}
	v.checkExactlyOnce(t, requests)
}
