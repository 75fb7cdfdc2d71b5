package coalesce

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
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

// TestAbandonedCallIsNotReused: a caller that stops waiting (its context
// ended) leaves its call to the worker; the answer that arrives later must
// not reach another caller through a recycled call.
func TestAbandonedCallIsNotReused(t *testing.T) {
	d := &double{started: make(chan struct{}), release: make(chan struct{})}
	b := New(d.run, Options{Workers: 1, MaxBatch: 1})
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { _, err := b.Do(ctx, 1); done <- err }()
	<-d.started // the worker holds the call of 1
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Do(1) after cancel = %v, want context.Canceled; reproduce: go test ./internal/coalesce -run %s", err, t.Name())
	}
	close(d.release)
	for q := 2; q < 50; q++ {
		if got, err := b.Do(context.Background(), q); err != nil || got != 2*q {
			t.Fatalf("Do(%d) = %d, %v after an abandoned call; want %d; reproduce: go test ./internal/coalesce -run %s", q, got, err, 2*q, t.Name())
		}
	}
}

// BenchmarkDo measures the batcher's own cost per call (no database) with 64
// callers: what coalescing adds to every claim before any round trip. It
// has been a channel hand-off of a few hundred nanoseconds per call, and at
// 64 concurrent claims a worker finds dozens queued behind the one it
// waited for.
//
//	go test -run '^$' -bench BenchmarkDo -benchmem ./internal/coalesce
func BenchmarkDo(b *testing.B) {
	bt := New(func(_ context.Context, qs []int, rs []Result[int]) {
		for i, q := range qs {
			rs[i].Val = q
		}
	}, Options{Workers: 2, MaxBatch: 256})
	defer bt.Close()
	b.ReportAllocs()
	b.SetParallelism(32) // 64 goroutines on the 2-core test machine
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := bt.Do(context.Background(), 1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// A Lane's caller alone runs its call itself; callers in flight together
// share batches.
func TestLaneRunsALoneCallerItselfAndBatchesTheRest(t *testing.T) {
	var batched atomic.Int64
	release := make(chan struct{})
	l := NewLane(func(ctx context.Context, qs []int, rs []Result[int]) {
		batched.Add(int64(len(qs)))
		for i, q := range qs {
			rs[i].Val = q * 10
		}
	}, Options{Workers: 1, MaxBatch: 8})
	defer l.Close()
	v, err := l.Do(context.Background(), 1, func() (int, error) { return -1, nil })
	if v != -1 || err != nil || batched.Load() != 0 {
		t.Fatalf("a lone Do = %d, %v with %d batched; want -1 (run alone), none batched", v, err, batched.Load())
	}
	// One caller holds the Lane in its alone(); the others, in flight with
	// it, must go through the batcher.
	holding := make(chan struct{})
	done := make(chan int)
	go func() {
		v, _ := l.Do(context.Background(), 0, func() (int, error) { close(holding); <-release; return -1, nil })
		done <- v
	}()
	<-holding
	var wg sync.WaitGroup
	for q := 1; q <= 5; q++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := l.Do(context.Background(), q, func() (int, error) { return -1, nil })
			if v != q*10 || err != nil {
				t.Errorf("Do(%d) beside another caller = %d, %v; want %d from the batcher", q, v, err, q*10)
			}
		}()
	}
	wg.Wait()
	close(release)
	if v := <-done; v != -1 {
		t.Fatalf("the holding caller's Do = %d, want -1", v)
	}
	if batched.Load() != 5 {
		t.Fatalf("%d calls batched, want the 5 beside the holder", batched.Load())
	}
	l.Close()
	if _, err := l.b.Do(context.Background(), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close the batcher answers %v, want ErrClosed", err)
	}
}

// Lanes of one Crew share their count: a caller in flight in one makes a
// caller of the other join its batcher, and a caller alone in the Crew
// runs its call itself in either.
func TestCrewLanesShareTheirCount(t *testing.T) {
	var crew Crew
	var batched atomic.Int64
	fn := func(ctx context.Context, qs []int, rs []Result[int]) {
		batched.Add(int64(len(qs)))
		for i, q := range qs {
			rs[i].Val = q * 10
		}
	}
	first, second := NewCrewLane(&crew, fn, Options{Workers: 1, MaxBatch: 8}), NewCrewLane(&crew, fn, Options{Workers: 1, MaxBatch: 8})
	defer first.Close()
	defer second.Close()
	alone := func() (int, error) { return -1, nil }
	for name, l := range map[string]*Lane[int, int]{"first": first, "second": second} {
		if v, err := l.Do(context.Background(), 1, alone); v != -1 || err != nil {
			t.Fatalf("a lone Do on the %s lane = %d, %v; want -1 (run alone)", name, v, err)
		}
	}
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		first.Do(context.Background(), 0, func() (int, error) { close(holding); <-release; return -1, nil })
	}()
	<-holding
	if v, err := second.Do(context.Background(), 2, alone); v != 20 || err != nil {
		t.Errorf("Do on the second lane while the first holds a caller = %d, %v; want 20 from the batcher", v, err)
	}
	close(release)
	<-done
	if v, err := second.Do(context.Background(), 3, alone); v != -1 || err != nil {
		t.Errorf("Do on the second lane once the first's caller left = %d, %v; want -1 (run alone)", v, err)
	}
	if batched.Load() != 1 {
		t.Errorf("%d calls batched, want 1", batched.Load())
	}
}

// TestGatherTakesTheCallersWokenTogether wakes 8 callers at once (as a
// batch's answers do) on one processor, with the only worker idle: under
// Gather their first batch holds all 8, where without it the first caller
// to reach the worker goes alone. The scheduler may run the worker early
// (it checks the global queue every 61st schedule, and -race shuffles the
// local one), so 8 of 10 trials must gather, not all.
func TestGatherTakesTheCallersWokenTogether(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const callers, trials = 8, 10
	gathered := 0
	for range trials {
		d := &double{}
		b := New(d.run, Options{Workers: 1, MaxBatch: 64, Gather: true})
		// A call alone first: when it returns, the worker is waiting for
		// the next (one processor: it ran until it blocked).
		if _, err := b.Do(context.Background(), 1); err != nil {
			t.Fatal(err)
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if got, err := b.Do(context.Background(), i); err != nil || got != 2*i {
					t.Errorf("Do(%d) = %d, %v", i, got, err)
				}
			}()
		}
		runtime.Gosched() // let them all wait on start
		close(start)
		wg.Wait()
		b.Close()
		d.mu.Lock()
		if len(d.sizes) >= 2 && d.sizes[1] == callers {
			gathered++
		}
		d.mu.Unlock()
	}
	if gathered < 8 {
		t.Fatalf("the 8 callers woken together shared their first batch in %d of %d trials, want at least 8; reproduce: go test ./internal/coalesce -run %s -count 20", gathered, trials, t.Name())
	}
}
