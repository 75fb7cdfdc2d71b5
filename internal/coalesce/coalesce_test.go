package coalesce

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// double answers each request with twice its value and records batch sizes.
type double struct {
	mu    sync.Mutex
	sizes []int
	// If set, the first batch sends on started and waits for release.
	started, release chan struct{}
}

func (d *double) run(_ context.Context, qs []int, rs []Result[int]) {
	d.mu.Lock()
	first := len(d.sizes) == 0
	d.mu.Unlock()
	if first && d.started != nil {
		d.started <- struct{}{}
		<-d.release
	}
	d.mu.Lock()
	d.sizes = append(d.sizes, len(qs))
	d.mu.Unlock()
	for i, q := range qs {
		if q < 0 {
			rs[i].Err = errors.New("negative")
			continue
		}
		rs[i].Val = 2 * q
	}
}

func TestEveryCallGetsItsOwnAnswer(t *testing.T) {
	d := &double{}
	b := New(d.run, Options{Workers: 2, MaxBatch: 8})
	defer b.Close()
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				q := g*1000 + i
				if i%7 == 0 {
					q = -q - 1
				}
				got, err := b.Do(context.Background(), q)
				if q < 0 {
					if err == nil {
						t.Errorf("Do(%d) = %d, nil; want the batch's per-request error", q, got)
					}
					continue
				}
				if err != nil || got != 2*q {
					t.Errorf("Do(%d) = %d, %v; want %d (answers crossed between requests?)", q, got, err, 2*q)
				}
			}
		}()
	}
	wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range d.sizes {
		if n < 1 || n > 8 {
			t.Fatalf("batch of %d requests, want 1..MaxBatch=8; reproduce: go test -race ./internal/coalesce -run %s", n, t.Name())
		}
	}
}

// TestConcurrentCallsShareABatch holds the only worker in its first batch
// until 10 more calls are queued: they must then go out as one batch.
func TestConcurrentCallsShareABatch(t *testing.T) {
	d := &double{started: make(chan struct{}), release: make(chan struct{})}
	b := New(d.run, Options{Workers: 1, MaxBatch: 64})
	defer b.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b.Do(context.Background(), 1) }()
	<-d.started // the first batch is running: the only worker is busy
	for i := range 10 {
		wg.Add(1)
		go func() { defer wg.Done(); b.Do(context.Background(), i) }()
	}
	for len(b.ch) < 10 { // wait until all 10 are queued behind the busy worker
		select {
		case <-t.Context().Done():
			return
		default:
		}
	}
	close(d.release)
	wg.Wait()
	if len(d.sizes) != 2 || d.sizes[1] != 10 {
		t.Fatalf("batch sizes %v, want [1 10]; reproduce: go test -race ./internal/coalesce -run %s", d.sizes, t.Name())
	}
}

func TestCloseAnswersEveryoneAndRejectsLaterCalls(t *testing.T) {
	d := &double{}
	b := New(d.run, Options{Workers: 2, MaxBatch: 4})
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := b.Do(context.Background(), g); err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("Do during Close = %v, want nil or ErrClosed", err)
					}
					return
				}
			}
		}()
	}
	b.Close()
	wg.Wait() // would hang if a queued call were never answered
	b.Close()
	if _, err := b.Do(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Do after Close = %v, want ErrClosed", err)
	}
}

func TestCancelledContextReturnsAtOnce(t *testing.T) {
	b := New((&double{}).run, Options{Workers: 1, MaxBatch: 1})
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Do(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Do(cancelled) = %v, want context.Canceled", err)
	}
}
