package lootservice

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	lootprops "github.com/onceproof/onceproof/props/loot"
	"github.com/onceproof/onceproof/props/loot/service/inventory"
)

// A Record is one run as the harness saw it: what it sent and got back,
// and what it read. Its file is JSON lines, one entry a line, each with
// its "type": the run header first, then exchanges, samples, give-ups and
// the faults' steps as applied, each in the order they ended, then the
// hosted inventory's deliveries in arrival order, then the end. The
// header holds the fault plan. Times are offsets from the run's start by
// the harness's clock, but a delivery's, which is the inventory's clock
// (the harness passes it its own). Later parts may add entry types beside
// these; a reader skips a type it does not know.
type Record struct {
	Run       Run
	Exchanges []Exchange
	Samples   []Sample
	GiveUps   []GiveUp
	// Faults are the planned faults' steps as applied, in time order.
	Faults []AppliedFault
	// Ledger is what the hosted inventory received for this run's
	// sessions, when Run.Inventory says the harness hosted it: every
	// delivery, its key, player, item and time, and what the inventory did
	// with it (an item applied once per Applied entry).
	Ledger []inventory.Delivery
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
	// Inventory: the harness hosted the inventory the service delivers
	// to, and Ledger is its record of this run (empty: nothing reached
	// it). False: the record holds no ledger, and deliveries are judged
	// from what the service and its database show.
	Inventory bool `json:"inventory,omitempty"`
	// Align is DriveOptions.Align of the run (0: started at once): a
	// replay starts on a multiple of it too, so a service storing whole
	// seconds stores the deadlines the record's run had.
	Align time.Duration `json:"align,omitempty"`
	// Started is the wall time of the run's start (for people, and to
	// place the ledger's deliveries, which the inventory timed by the
	// harness's clock).
	Started time.Time `json:"started"`
}

// Target is one instance of the service: its two listeners' base URLs.
type Target struct {
	Player   string `json:"player"`
	Internal string `json:"internal"`
	// Skew is the clock offset the harness started the instance with
	// (-skew; "" for none, or an instance it did not start): a replay with
	// -start gives its instances -skew again, and a reader of the record
	// sees which clock each answer came from.
	Skew string `json:"skew,omitempty"`
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
	Type     string              `json:"type"`
	Run      *Run                `json:"run,omitempty"`
	Exchange *Exchange           `json:"exchange,omitempty"`
	Sample   *Sample             `json:"sample,omitempty"`
	GiveUp   *GiveUp             `json:"giveUp,omitempty"`
	Fault    *AppliedFault       `json:"fault,omitempty"`
	Delivery *inventory.Delivery `json:"delivery,omitempty"`
	End      *time.Duration      `json:"end,omitempty"`
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
	for i := range r.Ledger {
		if err := enc.Encode(entry{Type: "delivery", Delivery: &r.Ledger[i]}); err != nil {
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
		case "delivery":
			if e.Delivery != nil {
				r.Ledger = append(r.Ledger, *e.Delivery)
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
	if len(r.Ledger) > 0 && !r.Run.Inventory {
		return Record{}, fmt.Errorf("%s: %d inventory deliveries, but the run header says the harness hosted no inventory", name, len(r.Ledger))
	}
	if _, err := r.Workload(); err != nil {
		return Record{}, fmt.Errorf("%s: %v", name, err)
	}
	return r, nil
}

// ledgerOf is what inv received for w's sessions, in arrival order: a
// delivery whose body names one of them, or, when it named none (a body
// the inventory refused), whose key begins with the run's tag, as every
// session number of the run does. A campaign's runs share one inventory
// and each run's tag is its own, so no run's record holds another's.
func ledgerOf(inv *inventory.Server, w Workload) []inventory.Delivery {
	mine := map[string]bool{}
	for x := range w.Schedule.Sessions {
		mine[w.SessionNo(x)] = true
	}
	prefix := w.SessionNo(0)[:len(w.Tag)+1]
	out := []inventory.Delivery{}
	for _, d := range inv.Deliveries() {
		if mine[d.Session] || (d.Session == "" && strings.HasPrefix(d.Key, prefix)) {
			out = append(out, d)
		}
	}
	return out
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
