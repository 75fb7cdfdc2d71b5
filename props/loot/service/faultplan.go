package lootservice

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
	"github.com/onceproof/onceproof/ref/loot"
)

// FaultKind is what one planned fault does to its target.
type FaultKind string

// The kinds, by the part of the system they hit. A network fault is on
// the harness->instance path (both listeners' proxies); an inventory
// fault is in the hosted inventory, on every delivery's first arrival
// while it lasts; a process fault is on an instance the harness started.
const (
	NetLatency   FaultKind = "net-latency"   // every chunk of both streams delayed by 200 ms
	NetStall     FaultKind = "net-stall"     // replies stop; the connection closes when the fault ends
	NetReset     FaultKind = "net-reset"     // connections reset on their next request data
	NetCutReply  FaultKind = "net-cut-reply" // replies cut after 16 bytes: the request was served, its answer is lost
	NetPartition FaultKind = "net-partition" // new connections refused, open ones closed, until healed
	InvFail      FaultKind = "inv-fail"      // the inventory answers 503, applies nothing
	InvTimeout   FaultKind = "inv-timeout-after-apply"
	InvLoseReply FaultKind = "inv-lose-reply"
	ProcKill     FaultKind = "proc-kill" // kill -9, restarted when the fault ends
	ProcStop     FaultKind = "proc-stop" // SIGSTOP, SIGCONT when the fault ends
)

// The dependency kinds: a fault on the path between every instance and
// one of its dependencies, through the proxy the harness put in front of
// it when it started the instances with the dependency's address
// (DepProxies); the kind's first word names the dependency.
const (
	DBReset     FaultKind = "db-reset"     // the service's database connections reset on their next data
	DBPartition FaultKind = "db-partition" // the database refuses new connections, open ones closed, until healed
	DBLatency   FaultKind = "db-latency"   // every chunk to and from the database delayed by 200 ms
	RedisStall  FaultKind = "redis-stall"  // Redis's replies stop past the lock ttl; its connections close when the fault ends
)

// depOf is the dependency each dependency kind hits, by its name in
// DepProxies (and the placeholder of -start's command).
var depOf = map[FaultKind]string{DBReset: "db", DBPartition: "db", DBLatency: "db", RedisStall: "redis"}

// Fault is one planned fault: from At for For (wall offsets from the
// run's start), on Target (an instance's index; the inventory's faults
// have no target: -1).
type Fault struct {
	At     time.Duration `json:"at"`
	For    time.Duration `json:"for"`
	Target int           `json:"target"`
	Kind   FaultKind     `json:"kind"`
}

// FaultPlan is a run's faults, in the order of At. Its zero value plans
// none.
type FaultPlan struct {
	Faults []Fault `json:"faults,omitempty"`
}

// Reach says which faults the harness can inject in a run: a kind whose
// part is not reachable is never planned (the plan of a record is the
// plan that was meant, so an unreachable fault would be a lie in it).
type Reach struct {
	Net, Inventory, Process bool
	// Deps are the dependencies the harness proxies ("db", "redis").
	Deps []string
	// LockTTL is the service's settle lease (its lock's ttl), which a
	// ProcStop must outlast (0: DefaultLockTTL).
	LockTTL time.Duration
}

// DefaultLockTTL is lootd's -lock-ttl default (loot.DefaultSettleLease,
// 30 s; cmd/lootd reads the same constant), the service mode's default
// for a service that does not say its own.
const DefaultLockTTL = loot.DefaultSettleLease

// settlePass is how long after a lease ends another instance of lootd
// takes the session over at the latest: one pass of its settle loop
// (-settle-every, default 1 s), which takes over stalled settles.
const settlePass = time.Second

// Stop is how long a ProcStop lasts: the lock ttl, which the stopped
// settler may have taken just before the stop, plus one settle pass, by
// whose end another instance has taken the session over while the stopped
// one still holds what it read; SIGCONT then lets the stale settler go on.
func (r Reach) Stop() time.Duration {
	return cmp.Or(r.LockTTL, DefaultLockTTL) + settlePass
}

// familyFaults maps each loot family to the faults that play, in service
// mode, what its schedules do to a Go design in the kit (a family not
// here gets none: its schedules need no fault):
//   - crash (a node dies at any effect): kill -9 of an instance, restarted;
//     a network reset stands in where the harness did not start it.
//   - timeout-after-success (a call happens, the caller is told it timed
//     out): the inventory applies and times out or loses its reply, and
//     the harness's own request is served and its reply cut.
//   - store-error (a call fails, nothing happened; or a part is down):
//     the inventory fails, and the instance is partitioned off (the
//     service's path to its database is faulted only where the harness
//     proxies it: depFaults).
//   - lock-expiry and compensation-race (a settler stalls past the lock
//     ttl): SIGSTOP of an instance past the service's lock ttl
//     (Reach.Stop), then SIGCONT; without a process, a stall of its
//     replies.
//   - duplicate-claim and concurrent-settle (requests arrive again, at
//     once): latency, which bunches retries and answers.
//   - late-claim (a stalled claim handler): a stall of replies across the
//     deadline.
var familyFaults = map[engine.Family][]FaultKind{
	lootfaults.Families.Crash:            {ProcKill, NetReset},
	lootfaults.Families.TimeoutSuccess:   {InvTimeout, InvLoseReply, NetCutReply},
	lootfaults.Families.StoreError:       {InvFail, NetPartition},
	lootfaults.Families.LockExpiry:       {ProcStop, NetStall},
	lootfaults.Families.CompensationRace: {ProcStop, InvTimeout},
	lootfaults.Families.DuplicateClaim:   {NetLatency},
	lootfaults.Families.ConcurrentSettle: {NetLatency},
	lootfaults.Families.LateClaim:        {NetStall},
}

// depFaults are the faults on the service's own dependencies that play a
// family, planned after familyFaults' (so a plan without dependencies is
// what it was before they could be faulted):
//   - store-error (a store call fails, nothing happened; or the store is
//     down): the database's connections reset, and the database
//     partitioned off (refused: each call fails at once).
//   - lock-expiry (a lock holder stalls past the ttl): Redis stops
//     answering for longer than the lock's ttl (Reach.Stop), so a lock
//     taken before the stall expires while its holder waits on it.
//   - late-claim and concurrent-settle (a claim's check and its write, two
//     settlers' steps, spread apart): the database's latency, which widens
//     every gap between two statements by a round trip's 400 ms.
var depFaults = map[engine.Family][]FaultKind{
	lootfaults.Families.StoreError:       {DBReset, DBPartition},
	lootfaults.Families.LockExpiry:       {RedisStall},
	lootfaults.Families.LateClaim:        {DBLatency},
	lootfaults.Families.ConcurrentSettle: {DBLatency},
}

// unplanned are the families a fault plan cannot play, and why.
var unplanned = map[engine.Family]string{
	lootfaults.Families.ClockSkew: "its fault is an instance's clock seconds off (faketime at the instance's start), an option of how the harness starts it, not a timed fault",
}

// FamilyFaults is the kinds family f's runs may plan (nil: none).
func FamilyFaults(f engine.Family) []FaultKind {
	return append(slices.Clone(familyFaults[f]), depFaults[f]...)
}

// part is the part of the system a kind needs.
func (k FaultKind) part(r Reach) bool {
	if d, ok := depOf[k]; ok {
		return slices.Contains(r.Deps, d)
	}
	switch {
	case k.is("net-"):
		return r.Net
	case k.is("inv-"):
		return r.Inventory
	case k.is("proc-"):
		return r.Process
	}
	return false
}

// faultsPerKind is how many faults of each kind a plan holds, each at a
// uniform time in its own part of the workload's span (the first part's
// first send to its last send, cut in faultsPerKind equal parts): two,
// because a loot workload has two halves a fault can meet, the sessions'
// opens and claims before their deadlines, and the settles and deliveries
// after, and every family's schedule sends them in that order.
const faultsPerKind = 2

// PlanFaults is run (family, seed)'s fault plan over workload w on
// targets instances, for the parts r reaches. The same arguments give the
// same plan (the seed drives a PCG of its own; no clock is read). The
// i-th fault of a kind starts at a uniform time in the i-th of
// faultsPerKind equal parts of the workload's span (its first send to its
// last), on a uniform target, and lasts a uniform time in faultLengths (a
// ProcStop r.Stop()); then a fault that clashes with an earlier one (two
// that cannot be on at once: clash) starts faultGap after it ends.
func PlanFaults(family engine.Family, seed uint64, w Workload, targets int, r Reach) FaultPlan {
	var p FaultPlan
	if len(w.Sends) == 0 || targets == 0 {
		return p
	}
	// The second PCG word is the family's name, so two families' plans
	// with one seed differ.
	var salt uint64
	for _, c := range []byte(family) {
		salt = salt*131 + uint64(c)
	}
	rng := rand.New(rand.NewPCG(seed, salt))
	first, last := w.Sends[0].At, w.Sends[len(w.Sends)-1].At
	part := int64(last-first)/faultsPerKind + 1
	lo, hi := faultLengths(w)
	for _, k := range FamilyFaults(family) {
		if !k.part(r) {
			continue
		}
		for i := range faultsPerKind {
			f := Fault{At: first + time.Duration(int64(i)*part+rng.Int64N(part)), Kind: k, Target: rng.IntN(targets)}
			f.For = lo + time.Duration(rng.Int64N(int64(max(hi-lo, 1))))
			if k == ProcStop {
				f.For = r.Stop()
			}
			if k.is("inv-") {
				f.Target = -1
			}
			if _, ok := depOf[k]; ok {
				f.Target = -1 // every instance's path to it: the kind names the dependency
			}
			if k == RedisStall {
				// Past the lock's ttl, as a SIGSTOP (Stop): the holder's
				// lock expires while Redis answers nobody, and the first
				// settler to reach it after the stall takes it over.
				f.For = r.Stop()
			}
			p.Faults = append(p.Faults, f)
		}
	}
	return apart(p)
}

// faultLengths are the bounds of a planned fault's length in w's run, lo
// inclusive, hi exclusive (hi == lo: every fault lasts lo). The lower
// bound follows the run's scale, the upper is the service's own time:
//   - lo is ten of the harness's retry delays at w's scale (usualRetry,
//     250 ms, times -scale: 50 ms at the default 0.2, so 0.5 s there),
//     so a request sent under a fault meets it on several attempts before
//     its retries (16, MaxAttempts, over the targets in turn, 15 delays:
//     1.5 lo) reach another instance or outlast it.
//   - hi is 2 s of wall time: lootd's inventory client's longest wait for
//     one delivery (httpinventory.DefaultTimeout) and two of its settle
//     passes, so a fault can cover a whole delivery attempt or a pass,
//     whatever the scale (the service's timings are not scaled).
//
// At a scale of 0.8 or more, lo (2 s at 0.8) reaches hi; then every fault
// lasts lo: shorter would let a request's retries skip the fault, and lo
// already covers the 2 s a delivery attempt takes, so a spread above it
// would only lengthen the run. At the default scale this is 0.5..2 s,
// the plans' lengths before the bound followed the scale.
func faultLengths(w Workload) (lo, hi time.Duration) {
	lo = 10 * w.wall(usualRetry)
	return lo, max(2*time.Second, lo)
}

// usualRetry is the loot schedules' retry delay (faults/loot's
// retryAfter). A few schedules of the crash, store-error and timeout
// families have a slow sender instead (a minute: past every lease) or
// one that sends once; the lengths are sized for the usual one all the
// same, as they were when they did not follow the scale (ten of a
// minute's delays would be a fault of minutes, outlasting the run).
const usualRetry = 250 * time.Millisecond

// faultGap is how long after a fault ends the next one it clashes with
// starts. An end and a start planned at one instant race (two timers
// firing together): seen on a loaded machine, a dependency partition's
// start ran 0.6 ms before the heal of the one before it and was refused
// ("already partitioned"), and that heal then ended it; an inventory
// fault's start can lose its plan to the previous one's end (SetPlan(nil))
// the same way. The two timers' goroutines are scheduled within a few ms
// of each other even with the machine's two cores shared eightfold;
// 250 ms is many times that and short beside a fault's length (at least
// ten retry delays, 0.5 s at the default scale: faultLengths).
const faultGap = 250 * time.Millisecond

// apart moves p's faults, in the order of their starts, so that each
// starts at least faultGap after every earlier one it clashes with ends,
// and returns p in the order of At.
func apart(p FaultPlan) FaultPlan {
	slices.SortStableFunc(p.Faults, func(a, b Fault) int { return int(a.At - b.At) })
	for i, f := range p.Faults {
		for _, e := range p.Faults[:i] {
			if clash(e, f) && f.At < e.At+e.For+faultGap {
				f.At = e.At + e.For + faultGap
			}
		}
		p.Faults[i] = f
	}
	slices.SortStableFunc(p.Faults, func(a, b Fault) int { return int(a.At - b.At) })
	return p
}

// clash reports whether faults a and b cannot be on at once:
//   - two of the hosted inventory (it holds one plan at a time: an
//     earlier one's end would clear a later one's plan, and the record
//     would say a fault was on that was not);
//   - two on one dependency, whatever their kinds (one proxy holds them
//     all: a reset toxic during a partition is no fault of its own, and a
//     partition cannot be partitioned again);
//   - two of one kind on one target (a second partition is refused; two
//     latencies at once are a fault of twice the latency, not the plan's);
//   - two network faults on one target's proxies of which one is a
//     partition or a stall: a partition closes the proxy's listener and
//     every connection (netfault's Refuse), so a toxic meanwhile has no
//     bytes to act on, and a stall (toxiproxy's timeout toxic, 0: until
//     removed) holds every byte of its stream, so a toxic after it in the
//     stream's chain sees none and a reset or a cut never fires. Latency,
//     resets and cut replies are toxics of names of their own, each
//     acting on the bytes it sees, and may overlap. (No family plans two
//     network kinds today, so this last rule moves no planned fault yet.)
//   - two process faults on one instance (a killed process cannot be
//     stopped, nor a stopped one killed and restarted under its stop).
func clash(a, b Fault) bool {
	da, aDep := depOf[a.Kind]
	db, bDep := depOf[b.Kind]
	switch {
	case aDep || bDep:
		return aDep && bDep && da == db
	case a.Kind.is("inv-") && b.Kind.is("inv-"):
		return true
	case a.Target != b.Target:
		return false
	case a.Kind == b.Kind:
		return true
	case a.Kind.is("net-") && b.Kind.is("net-"):
		return slices.Contains([]FaultKind{NetPartition, NetStall}, a.Kind) || slices.Contains([]FaultKind{NetPartition, NetStall}, b.Kind)
	}
	return a.Kind.is("proc-") && b.Kind.is("proc-")
}

// is reports whether k is of the part prefix names ("net-", "inv-",
// "proc-").
func (k FaultKind) is(prefix string) bool { return strings.HasPrefix(string(k), prefix) }

// Processes are the instances the harness started, by target index.
type Processes interface {
	Kill(i int) error
	Stop(i int) error
	Cont(i int) error
	Restart(ctx context.Context, i int) error
}

// Proxies are the netfault proxies in front of one target's listeners.
type Proxies struct {
	Player, Internal *netfault.Proxy
}

// Injectors are what a run's faults are applied through: nil parts are
// not reachable.
type Injectors struct {
	Net       []Proxies // by target
	Inventory *inventory.Server
	Processes Processes
	// Deps are the proxies between the instances and their dependencies,
	// by name (DepProxies).
	Deps map[string]*netfault.Proxy
}

// Reach is the parts i reaches.
func (i Injectors) Reach() Reach {
	return Reach{Net: len(i.Net) > 0, Inventory: i.Inventory != nil, Process: i.Processes != nil, Deps: slices.Sorted(maps.Keys(i.Deps))}
}

// AppliedFault is one step of a fault as applied: its start or its end.
type AppliedFault struct {
	At     time.Duration `json:"at"` // offset from the run's start
	Fault  int           `json:"fault"`
	Target int           `json:"target"`
	Kind   FaultKind     `json:"kind"`
	Step   string        `json:"step"`             // "start" or "end"
	Err    string        `json:"err,omitempty"`    // "": applied
	Result string        `json:"result,omitempty"` // what was done
}

// start applies f, the plan's fault i, through inj; it returns what was
// done.
func (inj Injectors) start(i int, f Fault) (string, error) {
	switch f.Kind {
	case InvFail, InvTimeout, InvLoseReply:
		if inj.Inventory == nil {
			return "", fmt.Errorf("no hosted inventory")
		}
		fault := map[FaultKind]inventory.Fault{InvFail: inventory.Fail, InvTimeout: inventory.TimeoutAfterApply, InvLoseReply: inventory.LoseReply}[f.Kind]
		inj.Inventory.SetPlan(inventory.Table{First: fault}.Plan())
		return "every first delivery: " + string(fault), nil
	case ProcKill:
		return "kill -9", inj.proc(f.Target, inj.Processes.Kill)
	case ProcStop:
		return "SIGSTOP", inj.proc(f.Target, inj.Processes.Stop)
	case DBReset, DBPartition, DBLatency, RedisStall:
		return inj.dep(i, f, true)
	}
	return inj.net(i, f, true)
}

// end ends f, the plan's fault i, through inj.
func (inj Injectors) end(ctx context.Context, i int, f Fault) (string, error) {
	switch f.Kind {
	case InvFail, InvTimeout, InvLoseReply:
		inj.Inventory.SetPlan(nil)
		return "plan none", nil
	case ProcKill:
		return "restart", inj.proc(f.Target, func(i int) error { return inj.Processes.Restart(ctx, i) })
	case ProcStop:
		return "SIGCONT", inj.proc(f.Target, inj.Processes.Cont)
	case DBReset, DBPartition, DBLatency, RedisStall:
		return inj.dep(i, f, false)
	}
	return inj.net(i, f, false)
}

func (inj Injectors) proc(i int, do func(int) error) error {
	if inj.Processes == nil {
		return fmt.Errorf("target %d was not started by the harness", i)
	}
	return do(i)
}

// toxics are the network kinds' toxics (NetPartition is a partition).
var toxics = map[FaultKind][]netfault.Toxic{
	// 200 ms each way: beyond a loopback round trip many times over, under
	// the 10 s client timeout.
	NetLatency: {{Name: "f-latency-up", Kind: netfault.Latency, Stream: netfault.Upstream, Latency: 200 * time.Millisecond}, {Name: "f-latency-down", Kind: netfault.Latency, Latency: 200 * time.Millisecond}},
	NetStall:   {{Name: "f-stall", Kind: netfault.Stall}},
	NetReset:   {{Name: "f-reset", Kind: netfault.ResetPeer, Stream: netfault.Upstream}},
	// 16 bytes: less than any HTTP status line with its headers, so no
	// answer is readable; the request itself went through whole.
	NetCutReply: {{Name: "f-cut", Kind: netfault.CutAfter, Bytes: 16}},
	// The dependencies' as the network's: 200 ms each way is many loopback
	// round trips and far under lootd's store budgets (seconds).
	DBReset:    {{Name: "f-db-reset", Kind: netfault.ResetPeer, Stream: netfault.Upstream}},
	DBLatency:  {{Name: "f-db-latency-up", Kind: netfault.Latency, Stream: netfault.Upstream, Latency: 200 * time.Millisecond}, {Name: "f-db-latency-down", Kind: netfault.Latency, Latency: 200 * time.Millisecond}},
	RedisStall: {{Name: "f-redis-stall", Kind: netfault.Stall}},
}

// dep starts (on) or ends a dependency fault on the proxy in front of
// the dependency its kind names, its toxics named by the fault's index i
// as net's are.
func (inj Injectors) dep(i int, f Fault, on bool) (string, error) {
	p := inj.Deps[depOf[f.Kind]]
	if p == nil {
		return "", fmt.Errorf("no proxy in front of the dependency %q (the harness fronts those -upstream names)", depOf[f.Kind])
	}
	return toggle(p, i, f.Kind, on)
}

// toggle starts (on) or ends fault i of kind k on proxy p: a partition
// (refused) and its heal, or the kind's toxics; it returns what it did.
func toggle(p *netfault.Proxy, i int, k FaultKind, on bool) (string, error) {
	if k == NetPartition || k == DBPartition {
		what, err := "partition", error(nil)
		if on {
			err = p.Partition(netfault.Refuse)
		} else {
			what, err = "heal", p.Heal()
		}
		if err != nil {
			return "", err
		}
		return what + " " + p.Addr(), nil
	}
	var done []string
	for _, t := range toxics[k] {
		t.Name = fmt.Sprintf("%s-%d", t.Name, i)
		var err error
		if on {
			err = p.Add(t)
		} else {
			err = p.Remove(t.Name)
		}
		if err != nil {
			return strings.Join(done, ", "), err
		}
		done = append(done, map[bool]string{true: "add ", false: "remove "}[on]+t.Name+" "+p.Addr())
	}
	return strings.Join(done, ", "), nil
}

// net starts (on) or ends a network fault on both of f.Target's proxies.
// Its toxics are named by the fault's index i too: the plan keeps two
// faults of one kind on one target apart in time, but on a loaded machine
// the first one's end can be applied after the second one's start, and
// two toxics of one name on one proxy are refused (seen on CI: "1 failed
// to apply").
func (inj Injectors) net(i int, f Fault, on bool) (string, error) {
	if f.Target < 0 || f.Target >= len(inj.Net) {
		return "", fmt.Errorf("no proxies in front of target %d", f.Target)
	}
	var done []string
	for _, p := range []*netfault.Proxy{inj.Net[f.Target].Player, inj.Net[f.Target].Internal} {
		if p == nil {
			continue
		}
		res, err := toggle(p, i, f.Kind, on)
		if res != "" {
			done = append(done, res)
		}
		if err != nil {
			return strings.Join(done, ", "), err
		}
	}
	return strings.Join(done, ", "), nil
}

// ProxyTargets puts a proxy of n in front of each listener of targets:
// the targets to drive (the proxies' URLs) and the proxies to fault.
func ProxyTargets(n *netfault.Net, targets []Target) ([]Target, []Proxies, error) {
	out := make([]Target, len(targets))
	ps := make([]Proxies, len(targets))
	for i, t := range targets {
		for _, l := range []struct {
			base string
			to   *string
			px   **netfault.Proxy
			name string
		}{{t.Player, &out[i].Player, &ps[i].Player, "player"}, {t.Internal, &out[i].Internal, &ps[i].Internal, "internal"}} {
			u, err := url.Parse(l.base)
			if err != nil || u.Host == "" {
				return nil, nil, fmt.Errorf("target %d's %s listener %q is not a URL with a host", i, l.name, l.base)
			}
			p, err := n.Proxy(fmt.Sprintf("target%d-%s", i, l.name), u.Host)
			if err != nil {
				return nil, nil, err
			}
			u.Host = p.Addr()
			*l.to, *l.px = u.String(), p
		}
	}
	return out, ps, nil
}

// DepProxies puts a proxy of n in front of each dependency of upstreams
// (a name, "db" or "redis" for the kinds that fault them, to its
// host:port), named "dep-<name>" in n's events: the proxies to fault
// (Injectors.Deps) and, by name, the address an instance is to reach
// each through (the values of the fleet's placeholders {db}, {redis}).
func DepProxies(n *netfault.Net, upstreams map[string]string) (map[string]*netfault.Proxy, map[string]string, error) {
	ps, vars := map[string]*netfault.Proxy{}, map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(upstreams)) {
		p, err := n.Proxy("dep-"+name, upstreams[name])
		if err != nil {
			return nil, nil, err
		}
		ps[name], vars[name] = p, p.Addr()
	}
	return ps, vars, nil
}
