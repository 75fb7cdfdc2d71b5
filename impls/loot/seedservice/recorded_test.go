package seedservice

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootprops "github.com/onceproof/onceproof/props/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	fleetinstance "github.com/onceproof/onceproof/props/loot/service/instance"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

// update rewrites the committed records: each defect's run is taken again
// until one fails exactly what the defect says.
var update = flag.Bool("update", false, "rewrite testdata/*.jsonl: each defect's run, taken again until it fails exactly its properties")

// A defect is one of the document's defects as service mode finds it: a
// run of one generated workload of a loot family against a fleet of the
// service, driven over HTTP and judged from its answers and its tables,
// and the committed record of that run (testdata/<Name>.jsonl, written
// by -update, never by hand). recorded checks it; a defect test is one
// call:
//
//	recorded(t, defect{Name: "ties", Family: lootfaults.Families.Ties, Seed: 3,
//		Want: []engine.Property{lootfaults.Properties.RuleOrder}})
type defect struct {
	// Name names the record file.
	Name string
	// Family and Seed generate the workload (lootservice.Generate, on
	// Instances targets at recordScale): the matrix's schedule of that
	// family and seed.
	Family engine.Family
	Seed   uint64
	// Want are the properties the run fails, exactly: a run that fails
	// fewer or more has not shown this defect.
	Want []engine.Property
	// Instances is how many JVMs the fleet runs (0: 1).
	Instances int
	// Plan is the run's fault plan, a pure function of its workload (nil:
	// none). The record holds the plan; recorded checks that Plan still
	// makes it.
	Plan func(lootservice.Workload) lootservice.FaultPlan
	// SlowDB, when set, is a latency each way on every byte between the
	// service and its database (a proxy in the JDBC URL): a slow
	// database, under which the gaps between a settle's autocommitted
	// statements last long enough for a fault timed from outside to land
	// in them. It is part of how the fleet is started, not of the record.
	SlowDB time.Duration
	// FarDB, when set, is each instance's own latency to the database in
	// place of SlowDB, an entry per instance (0: direct): instances at
	// different distances from one database, as when one runs in another
	// zone than the database and the others. Also the fleet's setup, not
	// the record's.
	FarDB []time.Duration
	// Align, when set, starts each run on a multiple of it of the wall
	// clock (DriveOptions.Align): the service stores its deadlines in
	// whole seconds, truncated, and a run started at once gets a
	// deadline up to a second before the schedule's.
	Align time.Duration
	// Args are more --key=value arguments of every instance.
	Args []string
	// Drain is how long the harness samples after the last send (0: 8 s).
	Drain time.Duration
	// Reruns is how many tries a replay (or -update) gets before the test
	// fails (0: reruns): more for a defect that shows in a part of the
	// runs only, derived beside the defect.
	Reruns int
	_      struct{}
}

// tries is how many times d's record is replayed (or d run, with
// -update) before its test fails.
func (d defect) tries() int { return cmp.Or(d.Reruns, reruns) }

// recordScale is every recorded run's wall time per unit of schedule
// time: 0.5 plays the families' 10 s claim windows in 5 s, which a claim
// through a slow database (a few round trips of 2 x SlowDB) still makes.
const recordScale = 0.5

// reruns is how many times a committed record is replayed before its
// test fails: a real system is not deterministic (a kill lands in a gap
// of a few hundred ms; a cancel races a settle), and each replay stops
// the test at its first reproduction.
const reruns = 3

func (d defect) instances() int { return max(d.Instances, 1) }

// slowDB is instance i's latency each way to the database.
func (d defect) slowDB(i int) time.Duration {
	if d.FarDB != nil {
		return d.FarDB[i]
	}
	return d.SlowDB
}

func (d defect) file() string { return filepath.Join("testdata", d.Name+".jsonl") }

// command is the one command that rewrites or replays d's record.
func (d defect) command(test string, rewrite bool) string {
	c := reproduce(test)
	if rewrite {
		c += " -update"
	}
	return c
}

// workload is d's workload under tag and the plan d makes for it.
func (d defect) workload(tag string) (lootservice.Workload, lootservice.FaultPlan, error) {
	w, err := lootservice.Generate(d.Family, d.Seed, tag, recordScale, d.instances())
	if err != nil {
		return w, lootservice.FaultPlan{}, err
	}
	var p lootservice.FaultPlan
	if d.Plan != nil {
		p = d.Plan(w)
	}
	return w, p, nil
}

// stale says how record r is no longer what d makes today ("" if it is):
// another family, seed, scale or fleet size, or the schedule its family
// and seed generate, or the fault plan d makes of it, changed since.
func (d defect) stale(r lootservice.Record) string {
	w, p, err := d.workload(r.Run.Tag)
	switch {
	case err != nil:
		return err.Error()
	case r.Run.Family != string(d.Family) || r.Run.Seed != d.Seed:
		return fmt.Sprintf("the record is of %s seed %d, the defect of %s seed %d", r.Run.Family, r.Run.Seed, d.Family, d.Seed)
	case r.Run.Scale != recordScale || len(r.Run.Targets) != d.instances():
		return fmt.Sprintf("the record ran at scale %v on %d targets, the defect runs at %v on %d", r.Run.Scale, len(r.Run.Targets), recordScale, d.instances())
	case r.Run.Schedule != lootprops.World.Format(w.Schedule):
		return fmt.Sprintf("%s seed %d generates another schedule today than the record's", d.Family, d.Seed)
	case !reflect.DeepEqual(r.Run.Faults, p):
		return fmt.Sprintf("the record's fault plan %+v, the defect plans %+v today", r.Run.Faults, p)
	case d.Align > 0 && !r.Run.Started.Truncate(d.Align).Equal(r.Run.Started):
		return fmt.Sprintf("the record's run started at %v, not on a multiple of %v", r.Run.Started, d.Align)
	}
	return ""
}

// failed is the properties fs fail, in fs's order.
func failed(fs []lootservice.Finding) []engine.Property {
	var out []engine.Property
	for _, f := range fs {
		if f.Verdict == lootservice.Failed {
			out = append(out, f.Property)
		}
	}
	return out
}

// same reports whether got and want name the same properties.
func same(got, want []engine.Property) bool {
	return len(got) == len(want) && !slices.ContainsFunc(got, func(p engine.Property) bool { return !slices.Contains(want, p) })
}

// anomalies are fs's failures' explanations, one a line.
func anomalies(fs []lootservice.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		for _, a := range f.Anomalies {
			fmt.Fprintf(&b, "  %s: %s\n", f.Property, a)
		}
	}
	return b.String()
}

// exchanges are r's exchanges, one a line: when each request was sent
// and answered, and the answer.
func exchanges(r lootservice.Record) string {
	w, err := r.Workload()
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, ex := range r.Exchanges {
		q := w.Schedule.Requests[ex.Request]
		fmt.Fprintf(&b, "  r%d %s x%d on %d: sent %v, answered %v: %d %s%s\n", ex.Request, q.Kind, q.Session, ex.Target,
			ex.Sent.Round(time.Millisecond), ex.Done.Round(time.Millisecond), ex.Status, strings.TrimSpace(ex.Answer), ex.Err)
	}
	return b.String()
}

// readRecord reads d's committed record.
func readRecord(d defect) (lootservice.Record, error) {
	b, err := os.ReadFile(d.file())
	if err != nil {
		return lootservice.Record{}, err
	}
	return lootservice.ReadRecord(d.file(), bytes.NewReader(b))
}

// committed is d's committed record, checked: not stale, and failing
// exactly d.Want when judged again (the record is the evidence, so it
// must show the defect by itself). Its errors end with the command that
// rewrites the record, test's.
func committed(d defect, test string) (lootservice.Record, error) {
	rec, err := readRecord(d)
	if err != nil {
		return rec, fmt.Errorf("%v\nTo write it: %s", err, d.command(test, true))
	}
	if why := d.stale(rec); why != "" {
		return rec, fmt.Errorf("%s is stale: %s\nTo rewrite it: %s", d.file(), why, d.command(test, true))
	}
	fs, err := lootservice.Judge(rec, lootservice.DefaultTolerance)
	if err != nil {
		return rec, err
	}
	if got := failed(fs); !same(got, d.Want) {
		return rec, fmt.Errorf("%s judged again fails %v, want %v\n%sTo rewrite it: %s", d.file(), got, d.Want, anomalies(fs), d.command(test, true))
	}
	return rec, nil
}

// recorded checks defect d. Without -update: its committed record must
// not be stale, must itself fail exactly d.Want when judged again, and a
// replay of it against a freshly started fleet on a fresh database must
// fail exactly d.Want within reruns tries. With -update: d's workload is
// run (up to reruns times) until a run fails exactly d.Want, and that
// run's record is written. Either way the test logs how many tries it
// took.
func recorded(t *testing.T, d defect) {
	t.Helper()
	var rec lootservice.Record
	if !*update {
		var err error
		if rec, err = committed(d, t.Name()); err != nil {
			t.Fatal(err)
		}
	}
	began := time.Now()
	e := newEnv(t)
	fleet := e.fleet(d)
	t.Logf("%d instance(s) started and warm in %v", d.instances(), time.Since(began).Round(time.Millisecond))
	spec := seedSpec(t)
	qs, err := spec.Queries("mysql")
	if err != nil {
		t.Fatal(err)
	}
	drain := d.Drain
	if drain == 0 {
		// 8 s: the compensation timer (500 ms) delivers a grant within a
		// second even through a slow database; a session still not over
		// by then is one nothing will finish.
		drain = 8 * time.Second
	}
	o := lootservice.DriveOptions{Targets: fleet.targets(), Spec: spec, Now: time.Now, DB: e.db, Queries: qs, Drain: drain,
		// A round every 50 ms: each defect's evidence lasts seconds (a
		// session SETTLING to the drain's end, a delivery of a canceled
		// session), and a record of 10 ms rounds is five times the size.
		Pause:  50 * time.Millisecond,
		Inject: lootservice.Injectors{Processes: fleet}, Align: d.Align}
	// A minute a try bounds a run of a few sessions (it is not a
	// measurement).
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(d.tries())*time.Minute)
	defer cancel()
	var tries []string
	for i := range d.tries() {
		tag := fmt.Sprintf("%s-%d", d.Name, i)
		var got lootservice.Record
		var fs []lootservice.Finding
		if *update {
			w, p, err := d.workload(tag)
			if err != nil {
				t.Fatal(err)
			}
			o.Faults = p
			if got, err = lootservice.Drive(ctx, w, string(d.Family), d.Seed, o); err != nil {
				t.Fatal(err)
			}
			if fs, err = lootservice.Judge(got, lootservice.DefaultTolerance); err != nil {
				t.Fatal(err)
			}
		} else if got, fs, err = lootservice.Replay(ctx, rec, tag, o, lootservice.DefaultTolerance); err != nil {
			t.Fatal(err)
		}
		f := failed(fs)
		tries = append(tries, fmt.Sprintf("try %d failed %v in %v", i+1, f, got.End.Round(time.Millisecond)))
		if !same(f, d.Want) {
			t.Logf("try %d of %d failed %v, want %v:\n%s%s", i+1, d.tries(), f, d.Want, anomalies(fs), exchanges(got))
			continue
		}
		t.Logf("%s: reproduced on try %d of at most %d (%s):\n%s", d.Name, i+1, d.tries(), strings.Join(tries, "; "), anomalies(fs))
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := got.Write(&b); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(d.file(), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	verb := "replays of " + d.file()
	if *update {
		verb = "runs of " + d.Name
	}
	t.Fatalf("%d %s, none failed exactly %v (%s)\nTo reproduce: %s", d.tries(), verb, d.Want, strings.Join(tries, "; "), d.command(t.Name(), *update))
}

// fleet starts d's instances of the service on e through the instance
// fleet (props/loot/service/instance), as `onceproof service -start`
// does, so that a run's process faults (kill -9, restart on the same
// port) reach them; an instance with a latency to the database
// (d.SlowDB, d.FarDB) has its JDBC URL go through a proxy that delays
// every byte by it. Each instance is a fleet of one, so that each has a
// JDBC URL of its own. The compensation timer runs every 500 ms, so a
// PENDING grant is delivered within the run.
func (e *env) fleet(d defect) fleet {
	t := e.t
	t.Helper()
	if d.FarDB != nil && len(d.FarDB) != d.instances() {
		t.Fatalf("defect %s: FarDB has %d latencies for %d instances", d.Name, len(d.FarDB), d.instances())
	}
	var n *netfault.Net
	var f fleet
	for i := range d.instances() {
		jdbc := e.jdbc
		if l := d.slowDB(i); l > 0 {
			if n == nil {
				var err error
				if n, err = netfault.New(netfault.Options{Now: time.Now}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(n.Close)
			}
			addr := strings.TrimPrefix(jdbc, "jdbc:mysql://")
			addr = addr[:strings.Index(addr, "/")]
			p, err := n.Proxy(fmt.Sprintf("mariadb-%d", i), addr)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []netfault.Stream{netfault.Upstream, netfault.Downstream} {
				if err := p.Add(netfault.Toxic{Name: "slow-db-" + string(s), Kind: netfault.Latency, Stream: s, Latency: l}); err != nil {
					t.Fatal(err)
				}
			}
			jdbc = strings.Replace(jdbc, addr, p.Addr(), 1)
		}
		dir := t.TempDir()
		one, err := fleetinstance.Start(context.Background(), fleetinstance.Options{
			Command: e.javaCommand(jdbc, d.Args...),
			N:       1, Dir: dir, Now: time.Now,
			// A JVM's start on two loaded cores takes seconds; 60 s bounds
			// the wait, it is not a measurement.
			ReadyTimeout: 60 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			one.Close()
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(dir, "instance-0.stderr"))
				t.Logf("instance %d's stderr:\n%s", i, b)
			}
		})
		f = append(f, one)
	}
	warm(t, f.targets())
	return f
}

// fleet is a run's instances, instance i the only instance of fleet[i]
// (e.fleet says why), as the run's Processes.
type fleet []*fleetinstance.Fleet

func (f fleet) Kill(i int) error                         { return f[i].Kill(0) }
func (f fleet) Stop(i int) error                         { return f[i].Stop(0) }
func (f fleet) Cont(i int) error                         { return f[i].Cont(0) }
func (f fleet) Restart(ctx context.Context, i int) error { return f[i].Restart(ctx, 0) }

// targets are f's instances as service mode's targets: the service has
// one listener for players and the game's server alike.
func (f fleet) targets() []lootservice.Target {
	var out []lootservice.Target
	for _, one := range f {
		out = append(out, lootservice.Target{Player: one.URL(0, "port"), Internal: one.URL(0, "port")})
	}
	return out
}

// javaCommand is the command line of one instance of the service on e,
// for the instance fleet: on the port the fleet picks ({port}), its
// database at jdbc (which may name a placeholder such as {db}), Redis and
// the inventory e's, the compensation timer every 500 ms (a PENDING grant
// is delivered within a run), then extra.
func (e *env) javaCommand(jdbc string, extra ...string) []string {
	host, port, _ := net.SplitHostPort(e.redis.Addr)
	return append([]string{"java", "-cp", classes(e.t) + ":" + driverJar, "com.example.loot.LootApplication",
		"--server.address=127.0.0.1", "--server.port={port}",
		"--spring.datasource.url=" + jdbc, "--spring.datasource.username=root", "--spring.datasource.password=",
		"--spring.data.redis.host=" + host, "--spring.data.redis.port=" + port,
		"--loot.settle.lock-key-prefix=" + e.lockNS, "--loot.time-zone=" + zone,
		"--loot.inventory.url=" + e.inv.srv.URL, "--loot.compensate.interval-millis=500"}, extra...)
}

// warm sends each target one of each request a run sends, for a session
// no run opens, and waits for the answers: a JVM's first requests load
// and compile the code they run and take up to seconds on loaded cores,
// and a run's open answered that late would push its deadline past the
// settle the workload sends at the planned one (the service then answers
// "settle triggered" and nothing settles it: the document has no
// scheduler). Then warmConns claims at once, so each pool holds that many
// connections: through a slow database a request that must open one
// spends four round trips on the handshake and the time zone first (a
// cancel racing a settle was seen to land after the settle's gap so).
// Its answers are not judged.
func warm(t *testing.T, targets []lootservice.Target) {
	t.Helper()
	c := &http.Client{Timeout: 60 * time.Second}
	post := func(base, path, body string) error {
		resp, err := c.Post(base+path, "application/json", strings.NewReader(body))
		if err != nil {
			return fmt.Errorf("warming %s: %v", base, err)
		}
		io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	// The targets at once: through a slow database each takes seconds.
	errs := make(chan error, len(targets)*warmConns)
	var wg sync.WaitGroup
	for _, tg := range targets {
		wg.Go(func() {
			for _, r := range []struct{ path, body string }{
				{"/api/loot/sessions", `{"sessionNo":"warm","lootCode":"warm","quantity":1,"claimWindowSeconds":3600}`},
				{"/api/loot/intent", `{"sessionNo":"warm","playerId":0,"intentType":"NEED"}`},
				{"/api/loot/settle", `{"sessionNo":"warm","lootCode":"warm","quantity":1}`},
				{"/api/loot/cancel", `{"sessionNo":"warm-none"}`},
				{"/api/loot/compensate", `{}`},
			} {
				if err := post(tg.Internal, r.path, r.body); err != nil {
					errs <- err
					return
				}
			}
			var conns sync.WaitGroup
			for i := range warmConns {
				conns.Go(func() {
					if err := post(tg.Internal, "/api/loot/intent", fmt.Sprintf(`{"sessionNo":"warm","playerId":%d,"intentType":"GREED"}`, i+1)); err != nil {
						errs <- err
					}
				})
			}
			conns.Wait()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// warmConns is how many connections warm leaves in each pool: more than
// a run's requests in flight on one instance at once (a settle, a cancel
// and the compensation timer's pass).
const warmConns = 4
