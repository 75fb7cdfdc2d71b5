package lootservice

import (
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

const depsRepro = "go test ./props/loot/service -count=1 -run 'TestPlanFaultsTheDependencies|TestDependencyFaultsApply'"

// TestPlanFaultsTheDependencies: with the database and Redis proxied,
// each family where they play plans their kinds (two of each, on every
// instance's path: target -1, a Redis stall past lootd's 5 s lock ttl),
// no two on one dependency within faultGap of each other (one proxy holds
// them: a partition that starts as the last one heals is refused), and
// the rest of the plan is the plan without them; a dependency not
// proxied gets none.
func TestPlanFaultsTheDependencies(t *testing.T) {
	withDeps := reachAll
	withDeps.Deps = []string{"db", "redis"}
	for _, c := range []struct {
		f    engine.Family
		want []FaultKind
	}{
		{lootfaults.Families.StoreError, []FaultKind{DBReset, DBPartition}},
		{lootfaults.Families.LockExpiry, []FaultKind{RedisStall}},
		{lootfaults.Families.LateClaim, []FaultKind{DBLatency}},
		{lootfaults.Families.ConcurrentSettle, []FaultKind{DBLatency}},
		{lootfaults.Families.Clean, nil},
	} {
		w := workloadOf(t, c.f, 5, 3)
		without, with := PlanFaults(c.f, 5, w, 3, reachAll), PlanFaults(c.f, 5, w, 3, withDeps)
		var rest []Fault
		count := map[FaultKind]int{}
		for _, x := range with.Faults {
			if _, dep := depOf[x.Kind]; !dep {
				rest = append(rest, x)
				continue
			}
			count[x.Kind]++
			if x.Target != -1 || (x.Kind == RedisStall && x.For <= 5*time.Second) {
				t.Errorf("%s: dependency fault %+v: want target -1 (and a Redis stall past 5 s)\nTo reproduce: %s", c.f, x, depsRepro)
			}
		}
		for _, k := range c.want {
			if count[k] != faultsPerKind {
				t.Errorf("%s: %d faults of %s, want %d: %v\nTo reproduce: %s", c.f, count[k], k, faultsPerKind, with.Faults, depsRepro)
			}
		}
		if len(count) != len(c.want) {
			t.Errorf("%s: dependency kinds %v, want %v\nTo reproduce: %s", c.f, count, c.want, depsRepro)
		}
		ends := map[string]time.Duration{}
		for _, x := range with.Faults {
			if d, ok := depOf[x.Kind]; ok {
				if end, seen := ends[d]; seen && x.At < end+faultGap {
					t.Errorf("%s: %+v starts %v after the last fault on %s ends, want %v or more\nTo reproduce: %s", c.f, x, x.At-end, d, faultGap, depsRepro)
				}
				ends[d] = x.At + x.For
			}
		}
		if !slices.Equal(rest, without.Faults) {
			t.Errorf("%s: the plan's other faults moved when the dependencies joined:\n%v\n%v\nTo reproduce: %s", c.f, rest, without.Faults, depsRepro)
		}
		onlyDB := withDeps
		onlyDB.Deps = []string{"db"}
		for _, x := range PlanFaults(c.f, 5, w, 3, onlyDB).Faults {
			if x.Kind == RedisStall {
				t.Errorf("%s: a Redis stall planned with only the database proxied\nTo reproduce: %s", c.f, depsRepro)
			}
		}
	}
}

// echoServer listens on a loopback port until t ends, echoing what each
// connection sends; it returns the address.
func echoServer(t *testing.T) string {
	t.Helper()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { echo.Close() })
	go func() {
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 64)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					c.Write(buf[:n])
				}
			}()
		}
	}()
	return echo.Addr().String()
}

// TestDependencyFaultsApply: each dependency kind, started and ended
// through Injectors, does to a connection through every path to the
// dependency (here each of two instances has its own proxy, as at their
// own distances) what it says, and a kind whose dependency is not
// proxied is an error.
func TestDependencyFaultsApply(t *testing.T) {
	n, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ps, vars, err := DepProxies(n, map[string]string{"db": echoServer(t)}, Latencies{"db": {0, 0}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vars {
		if v["db"] != ps["db"][i].Addr() {
			t.Fatalf("instance %d's {db} is %q, its proxy listens on %q\nTo reproduce: %s", i, v["db"], ps["db"][i].Addr(), depsRepro)
		}
	}
	inj := Injectors{Deps: ps}
	for _, v := range vars {
		if _, err := roundTrip(v["db"]); err != nil {
			t.Fatalf("no fault, through %s: %v\nTo reproduce: %s", v["db"], err, depsRepro)
		}
	}
	for i, k := range []FaultKind{DBPartition, DBReset, DBLatency} {
		f := Fault{Kind: k, Target: -1}
		if _, err := inj.start(i, f); err != nil {
			t.Fatalf("%s start: %v\nTo reproduce: %s", k, err, depsRepro)
		}
		for j, v := range vars {
			took, err := roundTrip(v["db"])
			switch {
			case k == DBLatency && (err != nil || took < 400*time.Millisecond):
				t.Errorf("%s: a round trip of instance %d took %v (%v), want 400 ms or more\nTo reproduce: %s", k, j, took, err, depsRepro)
			case k != DBLatency && err == nil:
				t.Errorf("%s: a round trip of instance %d went through\nTo reproduce: %s", k, j, depsRepro)
			}
		}
		if _, err := inj.end(t.Context(), i, f); err != nil {
			t.Fatalf("%s end: %v\nTo reproduce: %s", k, err, depsRepro)
		}
		for j, v := range vars {
			if _, err := roundTrip(v["db"]); err != nil {
				t.Errorf("after %s ended, instance %d: %v\nTo reproduce: %s", k, j, err, depsRepro)
			}
		}
	}
	if _, err := inj.start(9, Fault{Kind: RedisStall, Target: -1}); err == nil {
		t.Errorf("a Redis stall with no Redis proxied applied\nTo reproduce: %s", depsRepro)
	}
	if got := len(n.Events()); got != 2*(2+2+4) {
		t.Errorf("%d proxy events, want 16 (on each of 2 paths: partition, heal, a reset's add and remove, latency's two of each)\nTo reproduce: %s", got, depsRepro)
	}
}

// roundTrip sends a byte through addr and says how long the echo took
// (an error: the connection failed, or nothing came in 2 s).
func roundTrip(addr string) (time.Duration, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	began := time.Now()
	c.SetDeadline(began.Add(2 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		return 0, err
	}
	_, err = c.Read(make([]byte, 1))
	return time.Since(began), err
}

// TestDistancesAreEachInstancesOwn: one latency is every instance's,
// through one shared proxy; one per instance gives each its own proxy at
// its own distance (a round trip is two of it: each way).
func TestDistancesAreEachInstancesOwn(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestDistancesAreEachInstancesOwn"
	n, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	echo := echoServer(t)
	// 250 ms each way: a round trip of 500 ms, many loopback round trips
	// even on loaded cores, and under roundTrip's 2 s.
	const far = 250 * time.Millisecond
	shared, vars, err := DepProxies(n, map[string]string{"db": echo}, Latencies{"db": {far}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(shared["db"]) != 1 || vars[0]["db"] != vars[1]["db"] {
		t.Errorf("one latency for 2 instances: %d proxies, {db} %q and %q, want one shared\nTo reproduce: %s", len(shared["db"]), vars[0]["db"], vars[1]["db"], repro)
	}
	_, vars, err = DepProxies(n, map[string]string{"db": echo}, Latencies{"db": {0, far}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	near, err0 := roundTrip(vars[0]["db"])
	away, err1 := roundTrip(vars[1]["db"])
	if err0 != nil || err1 != nil || near >= 2*far || away < 2*far {
		t.Errorf("db=0,%v: instance 0's round trip %v (%v), instance 1's %v (%v), want under and over %v\nTo reproduce: %s", far, near, err0, away, err1, 2*far, repro)
	}
}

// TestBadLatenciesAreRefusedNamingTheField: what ParseLatencies and
// Check refuse, each error naming the dependency.
func TestBadLatenciesAreRefusedNamingTheField(t *testing.T) {
	ups := map[string]string{"db": "127.0.0.1:1", "redis": "127.0.0.1:2"}
	for _, c := range []struct{ in, want string }{
		{"db=-1ms", "db: -1ms: a distance is >= 0"},
		{"db=fast", `db: "fast" is not a duration`},
		{"110ms", "want NAME=LATENCY"},
		{"db=1ms,db=2ms", "db given twice"},
		{"cache=1ms", "cache: not a dependency the harness fronts"},
		{"db=0,1ms,2ms,redis=1ms", "db: 3 latencies for 2 instances"},
	} {
		l, err := ParseLatencies(c.in)
		if err == nil {
			err = l.Check(ups, 2)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error saying %q\nTo reproduce: go test ./props/loot/service -run TestBadLatenciesAreRefusedNamingTheField", c.in, err, c.want)
		}
	}
	l, err := ParseLatencies("db=0,110ms,redis=5ms")
	if err != nil || l.Check(ups, 2) != nil || l.String() != "db=0s,110ms,redis=5ms" {
		t.Errorf("db=0,110ms,redis=5ms read as %v (%v), want it back as db=0s,110ms,redis=5ms\nTo reproduce: go test ./props/loot/service -run TestBadLatenciesAreRefusedNamingTheField", l, err)
	}
}

// TestFaultFamiliesWithOnlyTheDependencies: a campaign whose harness
// reaches only the dependencies runs the families their faults play.
func TestFaultFamiliesWithOnlyTheDependencies(t *testing.T) {
	got := FaultFamilies(Reach{Deps: []string{"db", "redis"}})
	for _, f := range []engine.Family{lootfaults.Families.StoreError, lootfaults.Families.LockExpiry} {
		if !slices.Contains(got, f) {
			t.Errorf("FaultFamilies with the database and Redis = %v, want %s in it\nTo reproduce: go test ./props/loot/service -count=1 -run TestFaultFamiliesWithOnlyTheDependencies", got, f)
		}
	}
}

// TestBackToBackPartitionsOnOneProxyBothApply: partitions of one target
// planned back to back (each where the one before ends) are placed
// faultGap apart, and applied by the driver's own fault steps on a real
// proxy each is applied and healed in turn: every step without error, the
// proxy's events partition, heal, partition, heal..., and the proxy
// passes bytes after the last heal. Without the gap a start can run
// before the previous heal, is refused ("already partitioned"), and that
// heal then ends it: with faultGap 0 this test failed in 10 of 10 runs
// (go test -count=10, machine load 11).
func TestBackToBackPartitionsOnOneProxyBothApply(t *testing.T) {
	const repro = "go test ./props/loot/service -count=1 -run TestBackToBackPartitionsOnOneProxyBothApply"
	n, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	p, err := n.Proxy("target0-player", echoServer(t))
	if err != nil {
		t.Fatal(err)
	}
	// Six of 100 ms: the run lasts 6 x (100 ms + faultGap), about 2 s.
	const k, each = 6, 100 * time.Millisecond
	var plan FaultPlan
	for i := range k {
		plan.Faults = append(plan.Faults, Fault{At: time.Duration(i) * each, For: each, Kind: NetPartition})
	}
	plan = apart(plan)
	for i, f := range plan.Faults[1:] {
		if e := plan.Faults[i]; f.At != e.At+e.For+faultGap {
			t.Fatalf("partition %d at %v, %v after the one before ends, want %v\nTo reproduce: %s", i+1, f.At, f.At-e.At-e.For, faultGap, repro)
		}
	}
	d := &driver{o: DriveOptions{Now: time.Now, Faults: plan, Inject: Injectors{Net: []Proxies{{Player: p}}}}, start: time.Now()}
	var wg sync.WaitGroup
	for i, f := range plan.Faults {
		wg.Go(func() { d.fault(t.Context(), i, f) })
	}
	wg.Wait()
	for _, a := range d.rec.Faults {
		if a.Err != "" {
			t.Errorf("fault %d's %s at %v: %s\nTo reproduce: %s", a.Fault, a.Step, a.At, a.Err, repro)
		}
	}
	var ops []string
	for _, e := range n.Events() {
		ops = append(ops, e.Op)
	}
	want := slices.Repeat([]string{"partition", "heal"}, k)
	if !slices.Equal(ops, want) {
		t.Errorf("the proxy's events %v, want %v\nTo reproduce: %s", ops, want, repro)
	}
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		t.Fatalf("after the last heal: %v\nTo reproduce: %s", err, repro)
	}
	c.Close()
}
