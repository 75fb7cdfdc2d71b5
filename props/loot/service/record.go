package lootservice

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	lootprops "github.com/onceproof/onceproof/props/loot"
)

// A Record is one run as the harness saw it: what it sent and got back,
// and what it read. Its file is JSON lines, one entry a line, each with
// its "type": the run header first, then exchanges, samples, give-ups and
// the faults' steps as applied, each in the order they ended, then the
// end. The header holds the fault plan. Times are offsets from the run's
// start by the harness's clock. Later parts may add entry types beside
// these (the hosted inventory's deliveries); a reader skips a type it
// does not know.
type Record struct {
	Run       Run
	Exchanges []Exchange
	Samples   []Sample
	GiveUps   []GiveUp
	// Faults are the planned faults' steps as applied, in time order.
	Faults []AppliedFault
	// End is when the harness stopped sampling.
	End time.Duration
}

// Run is the record's header: enough to send the same workload again.
type Run struct {
	Family   string   `json:"family"`
	Seed     uint64   `json:"seed"`
	Tag      string   `json:"tag"`
	Scale    float64  `json:"scale"`
	Targets  []Target `json:"targets"`
	Spec     string   `json:"spec"`
	Schedule string   `json:"schedule"`
	// Faults is the fault plan (a replay applies it again).
	Faults FaultPlan `json:"faultPlan"`
	// Drop are the schedule's requests not sent (by index): a reduced
	// record's removed sessions and sends.
	Drop []int `json:"drop,omitempty"`
	// Started is the wall time of the run's start (for people; nothing
	// judges by it).
	Started time.Time `json:"started"`
}

// Target is one instance of the service: its two listeners' base URLs.
type Target struct {
	Player   string `json:"player"`
	Internal string `json:"internal"`
}

// Exchange is one attempt of a request: sent, and answered or not.
type Exchange struct {
	Request int           `json:"request"`
	Attempt int           `json:"attempt"` // numbered across the run, in send order
	Target  int           `json:"target"`
	Method  string        `json:"method"`
	URL     string        `json:"url"`
	Body    string        `json:"body,omitempty"`
	Sent    time.Duration `json:"sent"`
	Done    time.Duration `json:"done"`
	Status  int           `json:"status"` // 0: no answer (Err says why)
	Answer  string        `json:"answer,omitempty"`
	Err     string        `json:"err,omitempty"`
	Outcome Outcome       `json:"outcome"`
	// Unmapped: no answer rule matched (the outcome is unknown).
	Unmapped bool `json:"unmapped,omitempty"`
}

// Sample is one read of the service's state.
type Sample struct {
	Session int           `json:"session"`
	Op      string        `json:"op"` // session, audit or mine
	Player  int64         `json:"player,omitempty"`
	Round   int           `json:"round"` // the sampling round of the session it belongs to
	Sent    time.Duration `json:"sent"`
	Done    time.Duration `json:"done"`
	Status  int           `json:"status"`
	Answer  string        `json:"answer,omitempty"`
	Err     string        `json:"err,omitempty"`
}

// GiveUp is the sender giving up on a planned delivery after its last
// attempt went unanswered.
type GiveUp struct {
	Request int           `json:"request"`
	At      time.Duration `json:"at"`
	Err     string        `json:"err"`
}

// entry is a record file line.
type entry struct {
	Type     string         `json:"type"`
	Run      *Run           `json:"run,omitempty"`
	Exchange *Exchange      `json:"exchange,omitempty"`
	Sample   *Sample        `json:"sample,omitempty"`
	GiveUp   *GiveUp        `json:"giveUp,omitempty"`
	Fault    *AppliedFault  `json:"fault,omitempty"`
	End      *time.Duration `json:"end,omitempty"`
}

// Write writes r as JSON lines.
func (r Record) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	if err := enc.Encode(entry{Type: "run", Run: &r.Run}); err != nil {
		return err
	}
	for i := range r.Exchanges {
		if err := enc.Encode(entry{Type: "exchange", Exchange: &r.Exchanges[i]}); err != nil {
			return err
		}
	}
	for i := range r.Samples {
		if err := enc.Encode(entry{Type: "sample", Sample: &r.Samples[i]}); err != nil {
			return err
		}
	}
	for i := range r.GiveUps {
		if err := enc.Encode(entry{Type: "giveUp", GiveUp: &r.GiveUps[i]}); err != nil {
			return err
		}
	}
	for i := range r.Faults {
		if err := enc.Encode(entry{Type: "fault", Fault: &r.Faults[i]}); err != nil {
			return err
		}
	}
	end := r.End
	return enc.Encode(entry{Type: "end", End: &end})
}

// ReadRecord reads a record file; name is for errors. A line of a type it
// does not know is skipped (a later part's).
func ReadRecord(name string, rd io.Reader) (Record, error) {
	var r Record
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n, header, ended := 0, false, false
	for sc.Scan() {
		n++
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return Record{}, fmt.Errorf("%s:%d: %v", name, n, err)
		}
		if !header && e.Type != "run" {
			return Record{}, fmt.Errorf("%s:%d: the first line is a %q entry, want the run header", name, n, e.Type)
		}
		switch e.Type {
		case "run":
			if header || e.Run == nil {
				return Record{}, fmt.Errorf("%s:%d: a second or empty run header", name, n)
			}
			header, r.Run = true, *e.Run
		case "exchange":
			if e.Exchange != nil {
				r.Exchanges = append(r.Exchanges, *e.Exchange)
			}
		case "sample":
			if e.Sample != nil {
				r.Samples = append(r.Samples, *e.Sample)
			}
		case "giveUp":
			if e.GiveUp != nil {
				r.GiveUps = append(r.GiveUps, *e.GiveUp)
			}
		case "fault":
			if e.Fault != nil {
				r.Faults = append(r.Faults, *e.Fault)
			}
		case "end":
			if e.End != nil {
				r.End, ended = *e.End, true
			}
		}
	}
	if err := sc.Err(); err != nil {
		return Record{}, fmt.Errorf("%s: %v", name, err)
	}
	if !header {
		return Record{}, fmt.Errorf("%s: empty: no run header", name)
	}
	if !ended {
		return Record{}, fmt.Errorf("%s: no end entry: the run was cut short", name)
	}
	if _, err := r.Workload(); err != nil {
		return Record{}, fmt.Errorf("%s: %v", name, err)
	}
	return r, nil
}

// Workload is the record's workload, parsed from its header.
func (r Record) Workload() (Workload, error) {
	s, err := lootprops.World.Parse(r.Run.Schedule)
	if err != nil {
		return Workload{}, fmt.Errorf("the run's schedule: %v", err)
	}
	w, err := NewWorkload(s, r.Run.Tag, r.Run.Scale, len(r.Run.Targets))
	return w.without(r.Run.Drop), err
}

// without is w without the sends of the requests in drop.
func (w Workload) without(drop []int) Workload {
	if len(drop) == 0 {
		return w
	}
	w.Sends = slices.DeleteFunc(slices.Clone(w.Sends), func(s Send) bool { return slices.Contains(drop, s.Request) })
	return w
}

// header is a run's header for workload w on targets with spec.
func header(w Workload, family string, seed uint64, targets []Target, spec Spec, started time.Time) Run {
	return Run{
		Family: family, Seed: seed, Tag: w.Tag, Scale: w.Scale, Targets: targets, Spec: spec.Text,
		Schedule: lootprops.World.Format(w.Schedule), Started: started,
	}
}
