package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	"github.com/onceproof/onceproof/ref"
)

// SinkHarness gives RunSink access to one sink's durable ledger.
type SinkHarness struct {
	// Open returns a new handle on the harness's ledger; every call is a
	// new handle on the SAME ledger (another node). Required. Handles that
	// implement io.Closer are closed when the subtest ends.
	Open func(t *testing.T) ref.Sink
	// Applied reads the ledger directly (not through a handle under test):
	// the payload recorded for key, and how many times key's effect was
	// applied. A correct sink reports 0 or 1; the harness must count real
	// applications (for example a counter its Effect increments in the
	// sink's transaction), not just the presence of the grant key, or the
	// suite cannot see a double credit. Required.
	Applied func(t *testing.T, key ref.Key) (payload []byte, times int)
	// Break, if set, breaks handle s's connection so that its next
	// Deliver must return an error. Nil skips the check.
	Break func(t *testing.T, s ref.Sink)
	_     struct{}
}

// RunSink runs the sink conformance checks as subtests of t. newHarness is
// called once per subtest and must return a harness on an empty ledger.
// The checks (named subtests, rerun as Run's are): one application per key
// under racing deliveries, 128-bit keys, contexts, Close, Break.
func RunSink(t *testing.T, newHarness func(t *testing.T) SinkHarness) {
	t.Helper()
	if newHarness == nil {
		t.Fatal("storetest.RunSink: newHarness is nil")
	}
	for _, c := range sinkChecks {
		t.Run(c.name, func(t *testing.T) {
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("reproduce: go test -race -count=1 -run '%s' <this package>", runPattern(t.Name()))
				}
			})
			h := newHarness(t)
			if h.Open == nil || h.Applied == nil {
				t.Fatal("storetest: SinkHarness.Open and SinkHarness.Applied are required")
			}
			c.fn(t, &sinkEnv{h: h})
		})
	}
}

type sinkEnv struct {
	h      SinkHarness
	mu     sync.Mutex
	closed map[ref.Sink]bool
}

func (e *sinkEnv) open(t *testing.T) ref.Sink {
	t.Helper()
	s := e.h.Open(t)
	if s == nil {
		t.Fatal("storetest: SinkHarness.Open returned nil")
	}
	t.Cleanup(func() {
		if c, ok := s.(io.Closer); ok && e.markClosed(s) {
			if err := c.Close(); err != nil {
				t.Logf("storetest: closing sink at cleanup: %v", err)
			}
		}
	})
	return s
}

// markClosed records that s is (being) closed; false if it already was.
func (e *sinkEnv) markClosed(s ref.Sink) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed == nil {
		e.closed = make(map[ref.Sink]bool)
	}
	if e.closed[s] {
		return false
	}
	e.closed[s] = true
	return true
}

func (e *sinkEnv) want(t *testing.T, k ref.Key, payload []byte, times int) {
	t.Helper()
	p, n := e.h.Applied(t, k)
	if n != times {
		t.Fatalf("key %v applied %d times, want %d", k, n, times)
	}
	if times > 0 && !bytes.Equal(p, payload) {
		t.Fatalf("key %v recorded payload %q, want %q", k, p, payload)
	}
}

func deliver(t *testing.T, s ref.Sink, k ref.Key, payload []byte) {
	t.Helper()
	if err := s.Deliver(ctx(t), k, payload); err != nil {
		t.Fatalf("Deliver(%v): %v", k, err)
	}
}

var sinkChecks = []struct {
	name string
	fn   func(t *testing.T, e *sinkEnv)
}{
	{"deliver/applies-once", checkSinkOnce},
	{"deliver/once-under-64-goroutines", checkSinkConcurrent},
	{"deliver/payload-copied-and-binary-safe", checkSinkPayload},
	{"keys/128-bit-distinct", checkSinkKeys128},
	{"context/canceled", checkSinkCanceled},
	{"close/err-closed", checkSinkClosed},
	{"break/error-reaches-caller", checkSinkBreak},
}

func checkSinkOnce(t *testing.T, e *sinkEnv) {
	s := e.open(t)
	k := key(1)
	e.want(t, k, nil, 0)
	for i := 0; i < 3; i++ {
		deliver(t, s, k, payloadOf(1))
	}
	// A redelivery with another payload is still the same grant.
	deliver(t, s, k, payloadOf(2))
	e.want(t, k, payloadOf(1), 1)
	// Another handle (node) sees it applied.
	deliver(t, e.open(t), k, payloadOf(1))
	e.want(t, k, payloadOf(1), 1)
}

func checkSinkConcurrent(t *testing.T, e *sinkEnv) {
	const goroutines = 64
	hs := []ref.Sink{e.open(t), e.open(t), e.open(t), e.open(t)}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		start = make(chan struct{})
	)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for n := uint64(0); n < 4; n++ {
				if err := hs[g%len(hs)].Deliver(ctx(t), key(n), payloadOf(n)); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("goroutine %d Deliver(key %d): %w", g, n, err))
					mu.Unlock()
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent Deliver: %v", err)
	}
	for n := uint64(0); n < 4; n++ {
		e.want(t, key(n), payloadOf(n), 1)
	}
}

func checkSinkPayload(t *testing.T, e *sinkEnv) {
	s := e.open(t)
	bin := binaryPayload()
	buf := append([]byte(nil), bin...)
	deliver(t, s, key(1), buf)
	for i := range buf {
		buf[i] = 'X'
	}
	e.want(t, key(1), bin, 1)
	deliver(t, s, key(2), nil)
	e.want(t, key(2), nil, 1)
}

func checkSinkKeys128(t *testing.T, e *sinkEnv) {
	s := e.open(t)
	a, b := ref.Key{Hi: key(1).Hi, Lo: 1}, ref.Key{Hi: key(1).Hi, Lo: 2}
	deliver(t, s, a, payloadOf(1))
	deliver(t, s, b, payloadOf(2))
	e.want(t, a, payloadOf(1), 1)
	e.want(t, b, payloadOf(2), 1) // a 64-bit fingerprint collision is two grants
}

func checkSinkCanceled(t *testing.T, e *sinkEnv) {
	s := e.open(t)
	cctx, cancel := context.WithCancel(ctx(t))
	cancel()
	if err := s.Deliver(cctx, key(1), payloadOf(1)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Deliver with a cancelled context = %v, want an error wrapping context.Canceled", err)
	}
	deliver(t, s, key(1), payloadOf(1))
	e.want(t, key(1), payloadOf(1), 1)
}

func checkSinkClosed(t *testing.T, e *sinkEnv) {
	s := e.open(t)
	c, ok := s.(io.Closer)
	if !ok {
		t.Skip("sink does not implement io.Closer")
	}
	deliver(t, s, key(1), payloadOf(1))
	e.markClosed(s)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Deliver(ctx(t), key(2), payloadOf(2)); !errors.Is(err, ref.ErrClosed) {
		t.Fatalf("Deliver after Close = %v, want an error wrapping ref.ErrClosed", err)
	}
	e.want(t, key(2), nil, 0)
	// Closing one handle leaves the ledger to the others.
	deliver(t, e.open(t), key(1), payloadOf(1))
	e.want(t, key(1), payloadOf(1), 1)
}

func checkSinkBreak(t *testing.T, e *sinkEnv) {
	if e.h.Break == nil {
		t.Skip("SinkHarness.Break is nil")
	}
	s := e.open(t)
	deliver(t, s, key(1), payloadOf(1))
	e.h.Break(t, s)
	if err := s.Deliver(ctx(t), key(2), payloadOf(2)); err == nil {
		t.Fatal("Deliver on a broken handle returned nil: a dropped connection must reach the caller as an error")
	}
	// Outcome unknown for key 2; the retry on a good handle settles it once.
	fresh := e.open(t)
	deliver(t, fresh, key(2), payloadOf(2))
	e.want(t, key(1), payloadOf(1), 1)
	e.want(t, key(2), payloadOf(2), 1)
}
