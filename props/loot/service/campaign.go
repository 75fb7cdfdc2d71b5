package lootservice

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// Families are the loot families a campaign runs without faults: those
// whose schedules need none (a campaign adds FaultFamilies of what its
// injectors reach). late-claim's stalled claim handler is played by a
// network stall when the harness proxies the targets.
var Families = []engine.Family{
	lootfaults.Families.Clean, lootfaults.Families.DuplicateClaim, lootfaults.Families.ConcurrentSettle,
	lootfaults.Families.EarlySettle, lootfaults.Families.LateClaim, lootfaults.Families.CancelRace,
	lootfaults.Families.Outsider, lootfaults.Families.Ties, lootfaults.Families.Quantity,
	lootfaults.Families.SharedLoot, lootfaults.Families.TeamChange, lootfaults.Families.FairChange,
	lootfaults.Families.IntentChange,
}

// FaultFamilies are the families whose plans need faults, of those with
// a kind r reaches, in the kit's column order.
func FaultFamilies(r Reach) []engine.Family {
	var out []engine.Family
	for _, f := range lootfaults.World.Families {
		if !slices.Contains(Families, f) && slices.ContainsFunc(FamilyFaults(f), func(k FaultKind) bool { return k.part(r) }) {
			out = append(out, f)
		}
	}
	return out
}

// CampaignOptions says what a campaign runs.
type CampaignOptions struct {
	Drive DriveOptions
	// Families are run in turn, run i of family Families[i%len] with seed
	// Seed+i (nil: the package's Families).
	Families []engine.Family
	Seed     uint64
	Runs     int
	// Tag prefixes every run's tag (run i's is Tag-r<i>): give each
	// campaign its own (the command line takes the start time's), so runs
	// against one database never share a session.
	Tag   string
	Scale float64
	// Out is the directory the record files go to ("": none written).
	Out       string
	Tolerance time.Duration
	// NoFaults plans no faults; otherwise each run's plan is PlanFaults of
	// its family and seed over what Drive.Inject reaches.
	NoFaults bool
	// LockTTL is the service's lock ttl, which a planned SIGSTOP outlasts
	// (0: DefaultLockTTL, lootd's).
	LockTTL time.Duration
	_       struct{}
}

// Summary is a campaign's result: per property, its verdict over the runs.
type Summary struct {
	// The schedules' own faults, which the kit injects into a Go design at
	// its effects, are not counted: service mode never injects them (it
	// plays each family by its plan's faults, Faults below), so a count of
	// them "not injected" is true of every run and says nothing.
	Runs, Requests, Attempts, Samples, Unmapped, GiveUps int
	// Faults counts the planned faults applied without error, by kind;
	// FaultErrors those whose start failed.
	Faults      map[FaultKind]int
	FaultErrors int
	Properties  []PropertySummary
}

// PropertySummary is one property over a campaign: failed if any run
// failed it, held if some run judged it and none failed, else not judged.
type PropertySummary struct {
	Property engine.Property
	Verdict  string
	// Judged counts the runs that judged it; How is the first's account.
	Judged int
	How    string
	// Why are the reasons it was not judged, one per distinct reason.
	Why []string
	// Failures are the failing runs: their record files and anomalies.
	Failures []RunFailure
}

// RunFailure is a run that failed a property.
type RunFailure struct {
	Run       int
	File      string
	Anomalies []string
}

// Campaign runs o.Runs workloads and judges each.
func Campaign(ctx context.Context, o CampaignOptions) (Summary, error) {
	fams := o.Families
	if len(fams) == 0 {
		fams = slices.Clone(Families)
		if !o.NoFaults {
			fams = append(fams, FaultFamilies(o.Drive.Inject.Reach())...)
		}
	}
	var sum Summary
	for i := range o.Runs {
		f := fams[i%len(fams)]
		seed := o.Seed + uint64(i)
		w, err := Generate(f, seed, fmt.Sprintf("%s-r%d", o.Tag, i), o.Scale, len(o.Drive.Targets))
		if err != nil {
			return sum, err
		}
		do := o.Drive
		if !o.NoFaults {
			r := do.Inject.Reach()
			r.LockTTL = o.LockTTL
			do.Faults = PlanFaults(f, seed, w, len(do.Targets), r)
		}
		rec, err := Drive(ctx, w, string(f), seed, do)
		if err != nil {
			return sum, err
		}
		file := ""
		if o.Out != "" {
			file = filepath.Join(o.Out, fmt.Sprintf("run%03d-%s-%d.jsonl", i, f, seed))
			if err := writeRecord(file, rec); err != nil {
				return sum, err
			}
		}
		fs, err := Judge(rec, o.Tolerance)
		if err != nil {
			return sum, err
		}
		sum.add(i, file, rec, fs)
	}
	return sum, nil
}

// Replay sends a record's workload again (but the requests its header
// drops), under a new tag, with its fault plan, and judges the new run:
// the record of the rerun and its findings. o.Faults is ignored: the
// record's plan is the one replayed. o.Align, when 0, is the record's
// (a record of an aligned run replays aligned; one written before
// records kept it replays at once, as it was then).
func Replay(ctx context.Context, r Record, tag string, o DriveOptions, tolerance time.Duration) (Record, []Finding, error) {
	w, err := r.Workload()
	if err != nil {
		return Record{}, nil, err
	}
	if len(o.Targets) == 0 {
		o.Targets = r.Run.Targets
	}
	w, err = NewWorkload(w.Schedule, tag, r.Run.Scale, len(o.Targets))
	if err != nil {
		return Record{}, nil, err
	}
	w = w.without(r.Run.Drop)
	o.Faults = r.Run.Faults
	o.Align = cmp.Or(o.Align, r.Run.Align)
	if o.Spec.Text == "" {
		if o.Spec, err = ParseSpec("the record's spec", r.Run.Spec); err != nil {
			return Record{}, nil, err
		}
	}
	again, err := Drive(ctx, w, r.Run.Family, r.Run.Seed, o)
	if err != nil {
		return Record{}, nil, err
	}
	again.Run.Drop = r.Run.Drop
	fs, err := Judge(again, tolerance)
	return again, fs, err
}

func writeRecord(file string, r Record) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := r.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// add counts run i into s.
func (s *Summary) add(i int, file string, r Record, fs []Finding) {
	s.Runs++
	sent := map[int]bool{}
	for _, ex := range r.Exchanges {
		sent[ex.Request] = true
		if ex.Unmapped {
			s.Unmapped++
		}
	}
	s.Requests += len(sent)
	s.Attempts += len(r.Exchanges)
	s.Samples += len(r.Samples)
	s.GiveUps += len(r.GiveUps)
	for _, a := range r.Faults {
		switch {
		case a.Step != "start":
		case a.Err != "":
			s.FaultErrors++
		default:
			if s.Faults == nil {
				s.Faults = map[FaultKind]int{}
			}
			s.Faults[a.Kind]++
		}
	}
	for _, f := range fs {
		j := slices.IndexFunc(s.Properties, func(p PropertySummary) bool { return p.Property == f.Property })
		if j < 0 {
			s.Properties = append(s.Properties, PropertySummary{Property: f.Property, Verdict: NotJudged})
			j = len(s.Properties) - 1
		}
		p := &s.Properties[j]
		switch f.Verdict {
		case NotJudged:
			if !slices.Contains(p.Why, f.How) {
				p.Why = append(p.Why, f.How)
			}
			continue
		case Failed:
			p.Verdict = Failed
			p.Failures = append(p.Failures, RunFailure{Run: i, File: file, Anomalies: f.Anomalies})
		case Held:
			if p.Verdict == NotJudged {
				p.Verdict = Held
			}
		}
		if p.Judged == 0 {
			p.How = f.How
		}
		p.Judged++
	}
}

// Failed reports whether any property failed.
func (s Summary) Failed() bool {
	return slices.ContainsFunc(s.Properties, func(p PropertySummary) bool { return p.Verdict == Failed })
}

// String is the summary as the report prints it.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs, %d requests (%d attempts), %d reads sampled, %d answers no rule mapped, %d requests given up\n",
		s.Runs, s.Requests, s.Attempts, s.Samples, s.Unmapped, s.GiveUps)
	kinds := slices.Sorted(maps.Keys(s.Faults))
	applied := make([]string, len(kinds))
	for i, k := range kinds {
		applied[i] = fmt.Sprintf("%s %d", k, s.Faults[k])
	}
	if len(applied) == 0 {
		applied = []string{"none"}
	}
	fmt.Fprintf(&b, "faults applied: %s; %d failed to apply\n", strings.Join(applied, ", "), s.FaultErrors)
	for _, p := range s.Properties {
		switch p.Verdict {
		case NotJudged:
			fmt.Fprintf(&b, "%-13s not judged: %s\n", p.Property, strings.Join(p.Why, "; "))
			continue
		case Held:
			fmt.Fprintf(&b, "%-13s held in %d of %d runs: %s\n", p.Property, p.Judged, s.Runs, p.How)
		case Failed:
			fmt.Fprintf(&b, "%-13s FAILED in %d of %d runs judged\n", p.Property, len(p.Failures), p.Judged)
			for _, f := range p.Failures {
				file := f.File
				if file == "" {
					file = "(no record written: -out)"
				}
				fmt.Fprintf(&b, "  run %d, %s\n", f.Run, file)
				for _, a := range f.Anomalies {
					fmt.Fprintf(&b, "    %s\n", a)
				}
			}
		}
		if len(p.Why) > 0 {
			fmt.Fprintf(&b, "  not judged in %d: %s\n", s.Runs-p.Judged, strings.Join(p.Why, "; "))
		}
	}
	return b.String()
}
