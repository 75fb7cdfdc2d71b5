package lootservice

import (
	"net"
	"slices"
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
// through Injectors, does to a connection through the dependency's proxy
// what it says, and a kind whose dependency is not proxied is an error.
func TestDependencyFaultsApply(t *testing.T) {
	n, err := netfault.New(netfault.Options{Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ps, vars, err := DepProxies(n, map[string]string{"db": echoServer(t)})
	if err != nil {
		t.Fatal(err)
	}
	if vars["db"] != ps["db"].Addr() {
		t.Fatalf("{db} is %q, the proxy listens on %q\nTo reproduce: %s", vars["db"], ps["db"].Addr(), depsRepro)
	}
	inj := Injectors{Deps: ps}
	// roundTrip sends a byte through the proxy and says how long the echo
	// took (an error: the connection failed, or nothing came in 1 s).
	roundTrip := func() (time.Duration, error) {
		c, err := net.DialTimeout("tcp", vars["db"], time.Second)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		began := time.Now()
		c.SetDeadline(began.Add(time.Second))
		if _, err := c.Write([]byte("x")); err != nil {
			return 0, err
		}
		_, err = c.Read(make([]byte, 1))
		return time.Since(began), err
	}
	if _, err := roundTrip(); err != nil {
		t.Fatalf("no fault: %v\nTo reproduce: %s", err, depsRepro)
	}
	for i, k := range []FaultKind{DBPartition, DBReset, DBLatency} {
		f := Fault{Kind: k, Target: -1}
		if _, err := inj.start(i, f); err != nil {
			t.Fatalf("%s start: %v\nTo reproduce: %s", k, err, depsRepro)
		}
		took, err := roundTrip()
		switch {
		case k == DBLatency && (err != nil || took < 400*time.Millisecond):
			t.Errorf("%s: a round trip took %v (%v), want 400 ms or more\nTo reproduce: %s", k, took, err, depsRepro)
		case k != DBLatency && err == nil:
			t.Errorf("%s: a round trip went through\nTo reproduce: %s", k, depsRepro)
		}
		if _, err := inj.end(t.Context(), i, f); err != nil {
			t.Fatalf("%s end: %v\nTo reproduce: %s", k, err, depsRepro)
		}
		if _, err := roundTrip(); err != nil {
			t.Errorf("after %s ended: %v\nTo reproduce: %s", k, err, depsRepro)
		}
	}
	if _, err := inj.start(9, Fault{Kind: RedisStall, Target: -1}); err == nil {
		t.Errorf("a Redis stall with no Redis proxied applied\nTo reproduce: %s", depsRepro)
	}
	if got := len(n.Events()); got != 2+2+4 {
		t.Errorf("%d proxy events, want 8 (partition, heal, a reset's add and remove, latency's two of each)\nTo reproduce: %s", got, depsRepro)
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
