package faults_test

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

// benchDesign is keyed without its formatting cost: the runner's overhead
// is what BenchmarkRun measures, so the design does as little as a design
// can while still making the three effects of a real one (claim, credit,
// commit) per first delivery.
type benchDesign struct{}

type benchKey struct {
	player uint32
	match  uint64
	kind   faults.Kind
}

// grants caches grant strings across runs so the design allocates nothing
// per delivery in steady state.
var grants sync.Map

func grantOf(k benchKey) string {
	if g, ok := grants.Load(k); ok {
		return g.(string)
	}
	g := strconv.FormatUint(uint64(k.player), 10) + "/" + strconv.FormatUint(k.match, 10) + "/" + k.kind.String()
	grants.Store(k, g)
	return g
}

func (benchDesign) Name() string { return "bench" }
func (benchDesign) NewCluster() faults.Cluster {
	return &benchCluster{m: make(map[benchKey]uint8, 64)}
}

type benchCluster struct {
	m map[benchKey]uint8 // 1 claimed, 2 delivered
}

func (c *benchCluster) NewNode(id int, env faults.Env) faults.Node {
	n := &benchNode{c: c, env: env}
	n.claim = func() error {
		n.st = c.m[n.k]
		if n.st == 0 {
			c.m[n.k] = 1
		}
		return nil
	}
	n.commit = func() error { c.m[n.k] = 2; return nil }
	return n
}

// benchNode keeps its closures to avoid allocating them per delivery; the
// deterministic runner calls one Deliver at a time.
type benchNode struct {
	c             *benchCluster
	env           faults.Env
	k             benchKey
	st            uint8
	claim, commit func() error
}

func (n *benchNode) Deliver(now time.Time, s faults.Settlement) (faults.Ack, error) {
	n.k = benchKey{s.Player, s.Match, s.Kind}
	if err := n.env.Durable("claim", n.claim); err != nil {
		return faults.Nack, err
	}
	if n.st == 2 {
		return faults.AckDuplicate, nil
	}
	if _, err := n.env.Credit(grantOf(n.k), s, s.Room); err != nil {
		return faults.Nack, err
	}
	if err := n.env.Durable("commit", n.commit); err != nil {
		return faults.Nack, err
	}
	return faults.AckCredited, nil
}

// benchSchedule is a clean schedule of 50 deliveries: 25 matches of one
// player (room changes every 3 matches), each an instant and a final.
func benchSchedule() faults.Schedule {
	s := faults.Schedule{Frame: engine.Frame{Family: faults.Families.Clean, Nodes: 1, RetryAfter: faults.MatchEvery / 4, MaxAttempts: 16}}
	for m := range 25 {
		for k, kind := range []faults.Kind{faults.KindInstant, faults.KindFinal} {
			id := len(s.Settlements)
			s.Settlements = append(s.Settlements, faults.Settlement{
				ID: id, Player: 1, Room: uint32(1 + m/3), Match: uint64(m + 1), Round: uint32(1 + m%3),
				Kind: kind, Net: int64(10 * (m%3 - 1)), Final: kind == faults.KindFinal, Seq: uint64(id + 1),
			})
			at := time.Duration(m)*faults.MatchEvery + time.Duration(2+2*k)*faults.MatchEvery/8
			s.Deliveries = append(s.Deliveries, engine.Delivery{At: at, Msg: id})
		}
	}
	return s
}

// BenchmarkRun measures schedule executions per second of the deterministic
// runner on a 50-delivery clean schedule. Run it with
//
//	go test -run='^$' -bench=BenchmarkRun -benchmem ./faults/
func BenchmarkRun(b *testing.B) {
	s := benchSchedule()
	if err := faults.World.Validate(s); err != nil {
		b.Fatal(err)
	}
	h := faults.Run(benchDesign{}, s, faults.RunOptions{})
	if h.Exhausted || h.Credits(0) != 1 {
		b.Fatalf("bench design is wrong: exhausted=%t credits(s0)=%d", h.Exhausted, h.Credits(0))
	}
	b.ReportAllocs()
	for b.Loop() {
		faults.Run(benchDesign{}, s, faults.RunOptions{})
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
	b.ReportMetric(float64(len(s.Deliveries)), "deliveries/schedule")
}

// BenchmarkGenerate measures how fast generate draws a schedule (the matrix
// draws one per cell run):
//
//	go test -run='^$' -bench=BenchmarkGenerate -benchmem ./faults/
func BenchmarkGenerate(b *testing.B) {
	for _, f := range []faults.Family{faults.Families.Clean, faults.Families.Crash, faults.Families.Concurrent} {
		b.Run("family="+string(f), func(b *testing.B) {
			seed := uint64(0)
			for b.Loop() {
				faults.World.Generate(f, seed)
				seed++
			}
		})
	}
}

// BenchmarkRunConcurrent measures a concurrent-family schedule run by the
// deterministic interleaver (a goroutine hand-off at every env call), and
// the same schedule run as one sequence (Concurrent false): the difference
// is the interleaver's cost.
//
//	go test -run='^$' -bench=BenchmarkRunConcurrent -benchmem ./faults/
func BenchmarkRunConcurrent(b *testing.B) {
	// The first seed whose schedule has at least 40 deliveries: a size
	// near BenchmarkRun's 50, so the benchmarks compare.
	var s faults.Schedule
	for seed := uint64(0); len(s.Deliveries) < 40; seed++ {
		s = faults.World.Generate(faults.Families.Concurrent, seed)
	}
	seq := s
	seq.Concurrent, seq.Switches = false, nil
	for _, c := range []struct {
		name string
		s    faults.Schedule
	}{{"interleaved", s}, {"sequential", seq}} {
		b.Run("mode="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				faults.Run(benchDesign{}, c.s, faults.RunOptions{})
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "schedules/s")
			b.ReportMetric(float64(len(c.s.Deliveries)), "deliveries/schedule")
		})
	}
}
