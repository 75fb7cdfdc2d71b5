package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/instance"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
	"github.com/onceproof/onceproof/props/loot/service/netfault"
	lootmysql "github.com/onceproof/onceproof/ref/loot/mysql"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib"
)

// serviceCmd is `service -subject loot -target ... [flags]`: judge a
// running loot service (package lootservice), or with -replay FILE rerun a
// record's workload and judge it again. Exit 1 when a property failed.
func serviceCmd(args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("service", flag.ContinueOnError)
	subject := fs.String("subject", lootfaults.World.Subject, "the subject: loot (the only one with a service mode)")
	targets := fs.String("target", "", "the instances: player=URL,internal=URL for each, separated by ';' (required unless -replay, whose record names them)")
	specFile := fs.String("spec", "", "the service's API spec file (default: lootd's; package lootservice's Spec doc gives the format)")
	db := fs.String("db", "", "the service's database, read as an auditor in read-only transactions with the spec's sql queries: postgres://... or mysql://... (use a read-only role)")
	seed := fs.Uint64("seed", 1, "the first run's seed; run i uses seed+i")
	runs := fs.Int("n", len(lootservice.Families), "how many runs; run i is of the i-th family of -family, in turn")
	families := fs.String("family", "", "comma-separated loot families to run (default: those that need no faults, and those whose faults -faults reaches)")
	scale := fs.Float64("scale", 0.2, "wall time per unit of schedule time: 0.2 plays a 10 s claim window in 2 s")
	drain := fs.Duration("drain", 30*time.Second, "how long after the last request to wait for every session to end")
	tolerance := fs.Duration("tolerance", lootservice.DefaultTolerance, "how far the harness's clock and the service's may disagree")
	out := fs.String("out", "", "the directory for the record files (default: a fresh private directory, printed)")
	replayFile := fs.String("replay", "", "a record file: send its workload again (under a new tag) with its fault plan, and judge the new run")
	faults := fs.String("faults", "net,inventory,process,deps", "the parts the harness faults, comma-separated: net (proxies between the harness and each instance), inventory (the hosted inventory, with -inventory-listen), process (kill -9 and SIGSTOP, only of instances -start started), deps (the database and Redis, only through -upstream's proxies); none: no faults")
	invListen := fs.String("inventory-listen", "", "host:port to host the inventory on (the service must deliver to http://host:port"+inventory.Path+"): deliveries are judged from its ledger; without it, from -db's items query or the service's reads, and no inventory faults")
	lockTTL := fs.Duration("lock-ttl", lootservice.DefaultLockTTL, "the service's settle lock ttl (lootd's -lock-ttl): a planned SIGSTOP lasts it plus 1 s, so another instance takes the stopped settler's session over")
	reduce := fs.Bool("reduce", false, "with -replay: if the rerun fails a property, reduce the record by rerunning it with sessions, sends and faults removed; the reduced record is written beside it")
	repeat := fs.Int("repeat", 3, "with -reduce: reruns of each candidate (a real service is not deterministic)")
	budget := fs.Int("budget", 60, "with -reduce: the most reruns in all")
	start := fs.String("start", "", "start the instances instead of -target: one instance's command line, fields separated by spaces (no quoting), with {port} (its player port), {internal} (its operations port; without it the player's), {index}, {dir} (-out), {skew}, {inventory} (the hosted inventory's URL, with -inventory-listen), {NAME} (the proxy in front of each -upstream NAME); each instance's stderr goes to -out")
	nInstances := fs.Int("instances", 3, "with -start, how many instances")
	skews := fs.String("skew", "", "with -start, comma-separated clock offsets per instance (0,2s,-3s): given to {skew} if the command takes it, else the instance runs under faketime")
	upstream := fs.String("upstream", "", "with -start, the instances' dependencies the harness fronts with a fault proxy: NAME=HOST:PORT,... (db=127.0.0.1:5432,redis=127.0.0.1:6379); {NAME} in -start's command is the proxy's host:port, and -faults deps faults db and redis there")
	align := fs.Duration("align", 0, "start each run on the next multiple of this of the wall clock (1s: a service that stores deadlines as whole-second DATETIMEs then stores the deadlines the schedule means; 0: at once); the record keeps it and -replay aligns as it says")
	ready := fs.String("ready", "", "with -start, a URL (placeholders as -start's) that answers 2xx once an instance serves (default: a TCP connect to {port})")
	pos, err := parse(fs, args, stdout)
	if err != nil {
		return 0, err
	}
	switch {
	case len(pos) > 0:
		return 0, badf("service takes no arguments, got %q (onceproof help service)", pos)
	case *subject != lootfaults.World.Subject:
		return 0, badf("-subject %q: service mode judges the loot subject only", *subject)
	case *runs < 1:
		return 0, badf("-n %d: want >= 1", *runs)
	case *scale <= 0:
		return 0, badf("-scale %v: want > 0", *scale)
	case *align < 0:
		return 0, badf("-align %v: want >= 0 (0: start at once)", *align)
	case *drain <= 0 || *tolerance < 0 || *lockTTL <= 0:
		return 0, badf("-drain and -lock-ttl must be > 0 and -tolerance >= 0")
	case *targets == "" && *replayFile == "" && *start == "":
		return 0, badf("-target is required (player=URL,internal=URL[;...]), or -start")
	case *start != "" && *targets != "":
		return 0, badf("-start starts the instances itself: give it without -target")
	case *repeat < 1 || *budget < 1:
		return 0, badf("-repeat and -budget must be >= 1")
	case *reduce && *replayFile == "":
		return 0, badf("-reduce reduces a -replay FILE's record")
	}
	fleetOpts, err := fleetOptions(*start, *nInstances, *skews, *ready)
	if err != nil {
		return 0, err
	}
	parts, depsOn, err := parseFaults(*faults)
	if err != nil {
		return 0, err
	}
	ups, err := parseUpstreams(*upstream, *start)
	if err != nil {
		return 0, err
	}
	var tgs []lootservice.Target
	if *targets != "" {
		if tgs, err = parseTargets(*targets); err != nil {
			return 0, err
		}
	}
	spec := lootservice.DefaultSpec()
	if *specFile != "" {
		b, err := os.ReadFile(*specFile)
		if err != nil {
			return 0, badf("-spec: %v", err)
		}
		if spec, err = lootservice.ParseSpec(*specFile, string(b)); err != nil {
			return 0, badf("%v", err)
		}
	}
	var fams []engine.Family
	if *families != "" {
		for _, f := range strings.Split(*families, ",") {
			if err := lootfaults.World.CheckFamily(engine.Family(f)); err != nil {
				return 0, badf("-family: %v", err)
			}
			fams = append(fams, engine.Family(f))
		}
	}
	dir := *out
	if dir == "" {
		if dir, err = os.MkdirTemp("", "onceproof-service-"); err != nil {
			return 0, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, badf("-out: %v", err)
	}
	auditor, queries, err := openAuditor(*db, spec)
	if err != nil {
		return 0, err
	}
	if auditor != nil {
		defer auditor.Close()
	}
	// An interrupt ends the run in flight; its record is not written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Process faults only on instances the harness started: it has no
	// other way to kill or stop them.
	var processes lootservice.Processes
	var deps map[string]*netfault.Proxy
	if *start != "" {
		fleetOpts.Dir = dir
		fleetOpts.Vars = map[string]string{}
		if *invListen != "" {
			fleetOpts.Vars["inventory"] = "http://" + *invListen + inventory.Path
		}
		if len(ups) > 0 {
			// The dependencies' proxies listen before the instances start:
			// an instance dials its database at once.
			n, err := netfault.New(netfault.Options{Now: time.Now})
			if err != nil {
				return 0, err
			}
			defer n.Close()
			var vars map[string]string
			if deps, vars, err = lootservice.DepProxies(n, ups); err != nil {
				return 0, err
			}
			maps.Copy(fleetOpts.Vars, vars)
		}
		fleet, err := instance.Start(ctx, fleetOpts)
		if err != nil {
			return 0, exitError{code: exitBadUse, msg: fmt.Sprintf("-start: %v", err)}
		}
		defer fleet.Close()
		tgs = fleetTargets(fleet, fleetOpts)
		processes = fleet
	}
	drive := lootservice.DriveOptions{Targets: tgs, Spec: spec, Now: time.Now, Drain: *drain, DB: auditor, Queries: queries, Align: *align}
	if *replayFile != "" {
		rec, err := readRecordFile(*replayFile)
		if err != nil {
			return 0, err
		}
		switch {
		case len(drive.Targets) == 0:
			// The record's instances, proxied like -target's.
			drive.Targets = rec.Run.Targets
		case *start != "" && len(drive.Targets) != len(rec.Run.Targets):
			// With -start the fleet stands in for the record's instances,
			// one for one: its plan's faults name them by index.
			return 0, badf("-replay: the record ran against %d instance(s), -instances %d", len(rec.Run.Targets), len(drive.Targets))
		}
	}
	if parts.Process {
		drive.Inject.Processes = processes // nil without -start: no process faults planned
	}
	if depsOn {
		drive.Inject.Deps = deps // nil without -upstream: no dependency faults planned
	}
	closeFaults, err := injectors(&drive, parts, *invListen)
	if err != nil {
		return 0, err
	}
	defer closeFaults()
	rd := reduceFlags{on: *reduce, opts: lootservice.ReduceOptions{Repeat: *repeat, Budget: *budget}}
	code, err := serviceRun(ctx, *replayFile, *specFile != "", drive, fams, *seed, *runs, *scale, *tolerance, *lockTTL, dir, rd, stdout)
	if ctx.Err() != nil {
		return 0, exitError{code: exitInterrupted, msg: "service: interrupted"}
	}
	return code, err
}

// serviceRun is service with its flags read.
func serviceRun(ctx context.Context, replayFile string, ownSpec bool, drive lootservice.DriveOptions, fams []engine.Family,
	seed uint64, runs int, scale float64, tolerance, lockTTL time.Duration, dir string, rd reduceFlags, stdout io.Writer) (int, error) {
	tgs, spec := drive.Targets, drive.Spec
	tag := "op" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if replayFile != "" {
		return replayService(ctx, replayFile, ownSpec, drive, tag, dir, tolerance, rd, stdout)
	}
	if err := reachable(ctx, instances(drive)); err != nil {
		return 0, err
	}
	sum, err := lootservice.Campaign(ctx, lootservice.CampaignOptions{
		Drive: drive, Families: fams, Seed: seed, Runs: runs, Tag: tag, Scale: scale, Out: dir, Tolerance: tolerance, LockTTL: lockTTL,
	})
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "service mode against %d instance(s), spec %s%s, records in %s\n%s", len(tgs), spec.Source, aligned(drive.Align), dir, sum)
	if sum.Failed() {
		return exitFailed, nil
	}
	return exitOK, nil
}

// openAuditor opens -db (nil without it) and the spec's queries for its
// driver. Nothing is dialled here: a database that does not answer shows
// as reads that failed, and the judge says so.
func openAuditor(dsn string, spec lootservice.Spec) (*sql.DB, map[string]string, error) {
	if dsn == "" {
		return nil, nil, nil
	}
	driver, kind := "pgx", "postgres"
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
	case strings.HasPrefix(dsn, "mysql://"):
		d, err := lootmysql.DSN(dsn)
		if err != nil {
			return nil, nil, badf("-db: %v", err)
		}
		driver, kind, dsn = "mysql", "mysql", d
	default:
		return nil, nil, badf("-db: want a postgres:// or mysql:// URL")
	}
	if kind == "mysql" {
		// DATETIME columns as times, the claim rows' claimed-at.
		sep := "?"
		if strings.Contains(dsn, "?") {
			sep = "&"
		}
		// loc: a DATETIME is a wall time of the spec's zone (UTC unless
		// it gives one), so the driver must not read it as UTC.
		dsn += sep + "parseTime=true&loc=" + url.QueryEscape(spec.Zone.String())
	}
	qs, err := spec.Queries(kind)
	if err != nil {
		return nil, nil, badf("-db: %v", err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, nil, badf("-db: %v", err)
	}
	return db, qs, nil
}

// replayService is service -replay FILE.
func replayService(ctx context.Context, file string, ownSpec bool, drive lootservice.DriveOptions, tag, dir string, tolerance time.Duration, rd reduceFlags, stdout io.Writer) (int, error) {
	rec, err := readRecordFile(file)
	if err != nil {
		return 0, err
	}
	if !ownSpec {
		drive.Spec = lootservice.Spec{} // the record's
	}
	if len(drive.Targets) == 0 {
		drive.Targets = rec.Run.Targets
	}
	if err := reachable(ctx, instances(drive)); err != nil {
		return 0, err
	}
	again, fs, err := lootservice.Replay(ctx, rec, tag, drive, tolerance)
	if err != nil {
		return 0, err
	}
	path := filepath.Join(dir, "replay-"+filepath.Base(file))
	if err := writeRecordFile(path, again); err != nil {
		return 0, err
	}
	fmt.Fprintf(stdout, "replayed %s (%s, seed %d) as %s%s, %d planned faults: %s\n", file, rec.Run.Family, rec.Run.Seed, tag, aligned(again.Run.Align), len(rec.Run.Faults.Faults), path)
	var failed engine.Property
	for _, x := range fs {
		fmt.Fprintf(stdout, "%-13s %s: %s\n", x.Property, x.Verdict, x.How)
		for _, a := range x.Anomalies {
			fmt.Fprintf(stdout, "  %s\n", a)
		}
		if x.Verdict == lootservice.Failed && failed == "" {
			failed = x.Property
		}
	}
	if failed == "" {
		return exitOK, nil
	}
	if rd.on {
		n := 0
		rerun := func(ctx context.Context, r lootservice.Record) (lootservice.Record, []lootservice.Finding, error) {
			n++
			return lootservice.Replay(ctx, r, fmt.Sprintf("%s-d%d", tag, n), drive, tolerance)
		}
		red, err := lootservice.Reduce(ctx, rec, failed, rerun, rd.opts)
		if err != nil {
			return 0, err
		}
		out := strings.TrimSuffix(file, ".jsonl") + ".reduced.jsonl"
		if err := writeRecordFile(out, red.Record); err != nil {
			return 0, err
		}
		fmt.Fprintf(stdout, "%s: %s: %s\n", failed, red, out)
	}
	return exitFailed, nil
}

// aligned is the report's words for runs started on multiples of a ("":
// at once).
func aligned(a time.Duration) string {
	if a <= 0 {
		return ""
	}
	return fmt.Sprintf(", each run started on a multiple of %v of the wall clock (-align)", a)
}

// instances are the instances drive reaches (through its proxies or not):
// the ones a bad -target names.
func instances(drive lootservice.DriveOptions) []lootservice.Target {
	if len(drive.Upstream) > 0 {
		return drive.Upstream
	}
	return drive.Targets
}

// readRecordFile reads -replay's record (bad input if it cannot).
func readRecordFile(file string) (lootservice.Record, error) {
	f, err := os.Open(file)
	if err != nil {
		return lootservice.Record{}, badf("-replay: %v", err)
	}
	defer f.Close()
	rec, err := lootservice.ReadRecord(file, f)
	if err != nil {
		return lootservice.Record{}, badf("-replay: %v", err)
	}
	return rec, nil
}

// reduceFlags are -reduce, -repeat and -budget.
type reduceFlags struct {
	on   bool
	opts lootservice.ReduceOptions
}

func writeRecordFile(path string, r lootservice.Record) error {
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	return errors.Join(r.Write(w), w.Close())
}

// parseFaults reads -faults: the parts to fault (deps: the dependencies
// -upstream fronts, known only once their proxies are up).
func parseFaults(s string) (r lootservice.Reach, deps bool, err error) {
	if s == "none" {
		return r, false, nil
	}
	for _, p := range strings.Split(s, ",") {
		switch strings.TrimSpace(p) {
		case "net":
			r.Net = true
		case "inventory":
			r.Inventory = true
		case "process":
			r.Process = true
		case "deps":
			deps = true
		default:
			return r, false, badf("-faults: %q: want none or a list of net, inventory, process, deps", p)
		}
	}
	return r, deps, nil
}

// injectors sets drive's injectors for parts: proxies in front of its
// targets for net, the inventory hosted at listen (whenever listen is
// given: the service delivers there, and the record carries its ledger)
// faulted for inventory. Process faults are set by the caller, on
// instances the harness started. The func closes what was started.
func injectors(drive *lootservice.DriveOptions, parts lootservice.Reach, listen string) (func(), error) {
	var closers []func()
	done := func() {
		for _, c := range closers {
			c()
		}
	}
	if listen != "" {
		inv, err := inventory.New(inventory.Options{Now: time.Now})
		if err != nil {
			return done, err
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return done, badf("-inventory-listen: %v", err)
		}
		mux := http.NewServeMux()
		mux.Handle(inventory.Path, inv)
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ln)
		closers = append(closers, func() { hs.Close() })
		drive.Inventory = inv
		if parts.Inventory {
			drive.Inject.Inventory = inv
		}
	}
	if parts.Net && len(drive.Targets) > 0 {
		n, err := netfault.New(netfault.Options{Now: time.Now})
		if err != nil {
			return done, err
		}
		closers = append(closers, n.Close)
		tgs, ps, err := lootservice.ProxyTargets(n, drive.Targets)
		if err != nil {
			return done, badf("-target: %v", err)
		}
		drive.Upstream, drive.Targets, drive.Inject.Net = drive.Targets, tgs, ps
	}
	return done, nil
}

// parseTargets parses -target: player=URL,internal=URL for each instance,
// separated by ';'.
func parseTargets(s string) ([]lootservice.Target, error) {
	var out []lootservice.Target
	for i, inst := range strings.Split(s, ";") {
		var t lootservice.Target
		for _, kv := range strings.Split(inst, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			if !ok {
				return nil, badf("-target: instance %d: %q: want player=URL,internal=URL", i+1, kv)
			}
			if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, badf("-target: instance %d: %s=%q: want an http:// or https:// base URL", i+1, k, v)
			}
			switch k {
			case "player":
				t.Player = v
			case "internal":
				t.Internal = v
			default:
				return nil, badf("-target: instance %d: %q: want player= or internal=", i+1, k)
			}
		}
		if t.Player == "" || t.Internal == "" {
			return nil, badf("-target: instance %d: want both player=URL and internal=URL", i+1)
		}
		out = append(out, t)
	}
	return out, nil
}

// reachable checks that every listener of every target answers HTTP at
// all (any status): a target that does not is bad input, reported before
// a run records a campaign of connection errors.
func reachable(ctx context.Context, tgs []lootservice.Target) error {
	c := &http.Client{Timeout: 5 * time.Second}
	for i, t := range tgs {
		for _, l := range []struct{ name, base string }{{"player", t.Player}, {"internal", t.Internal}} {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.base, nil)
			if err != nil {
				return badf("-target: instance %d %s %s: %v", i+1, l.name, l.base, err)
			}
			resp, err := c.Do(req)
			if err != nil {
				var ue *url.Error
				if errors.As(err, &ue) {
					err = ue.Err
				}
				return exitError{code: exitBadUse, msg: fmt.Sprintf("-target: instance %d %s %s is unreachable: %v", i+1, l.name, l.base, err)}
			}
			resp.Body.Close()
		}
	}
	return nil
}
