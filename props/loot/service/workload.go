package lootservice

import (
	"fmt"
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootprops "github.com/onceproof/onceproof/props/loot"
)

// A Workload is one generated schedule of a loot family as a service
// receives it: its requests under a run tag, each planned delivery a Send
// at a wall-clock offset from the run's start.
type Workload struct {
	// Schedule is the generated schedule (its text is in the record, so a
	// replay sends the same requests whatever the generator does since).
	Schedule lootfaults.Schedule
	// Tag makes the run's session numbers and loot codes its own: runs
	// against one database never share a session, and a player's wins
	// (counted per loot code) start from the schedule's in every run.
	Tag string
	// Scale is wall time per unit of the schedule's virtual time: 0.2 plays
	// a 10 s claim window in 2 s.
	Scale float64
	// Sends are the planned deliveries, in the order of their At.
	Sends []Send
}

// Send is one planned delivery.
type Send struct {
	Request int           // index in Schedule.Requests
	At      time.Duration // wall offset from the run's start
	Target  int           // the instance it goes to
}

// minWindow is the shortest claim window a service is asked for: the
// window is whole seconds in the document's API (claimWindowSeconds).
const minWindow = time.Second

// NewWorkload maps schedule s onto targets instances under tag, at scale.
// Compensation ticks are left out: a service runs its compensation job
// itself, and no API of the document's triggers it.
func NewWorkload(s lootfaults.Schedule, tag string, scale float64, targets int) (Workload, error) {
	if scale <= 0 {
		return Workload{}, fmt.Errorf("scale %v: want > 0", scale)
	}
	if targets < 1 {
		return Workload{}, fmt.Errorf("%d targets: want >= 1", targets)
	}
	w := Workload{Schedule: s, Tag: tag, Scale: scale}
	for _, d := range s.Deliveries {
		if s.Requests[d.Msg].Kind == lootfaults.Kinds.Compensate {
			continue
		}
		w.Sends = append(w.Sends, Send{Request: d.Msg, At: w.wall(d.At), Target: d.Node % targets})
	}
	slices.SortStableFunc(w.Sends, func(a, b Send) int { return int(a.At - b.At) })
	return w, nil
}

// Generate is the workload of family f's schedule for seed: the same
// schedule the matrix runs for (f, seed).
func Generate(f engine.Family, seed uint64, tag string, scale float64, targets int) (Workload, error) {
	if err := lootprops.World.CheckFamily(f); err != nil {
		return Workload{}, err
	}
	return NewWorkload(lootprops.World.Generate(f, seed), tag, scale, targets)
}

// wall is virtual time d as wall time.
func (w Workload) wall(d time.Duration) time.Duration { return time.Duration(float64(d) * w.Scale) }

// SessionNo is session x's number in this run.
func (w Workload) SessionNo(x int) string { return fmt.Sprintf("%s-x%d", w.Tag, x) }

// LootCode is session x's loot code in this run (two sessions of one code,
// shared-loot's, keep sharing it).
func (w Workload) LootCode(x int) string { return w.Tag + "-" + w.Schedule.Sessions[x].Loot() }

// Window is session x's claim window as sent: the schedule's, from the
// session's first open to its deadline, scaled and rounded to whole
// seconds (at least minWindow).
func (w Workload) Window(x int) int {
	open := w.Schedule.Sessions[x].Deadline
	for _, d := range w.Schedule.Deliveries {
		r := w.Schedule.Requests[d.Msg]
		if r.Kind == lootfaults.Kinds.OpenSession && r.Session == x && d.At < open {
			open = d.At
		}
	}
	win := w.wall(w.Schedule.Sessions[x].Deadline - open).Round(time.Second)
	return int(max(win, minWindow) / time.Second)
}

// vars are request r's placeholder values.
func (w Workload) vars(r lootfaults.Request) map[string]string {
	v := map[string]string{}
	if r.Session >= 0 {
		x := w.Schedule.Sessions[r.Session]
		v["session"], v["loot"], v["dungeon"] = w.SessionNo(r.Session), w.LootCode(r.Session), w.Tag
		v["quantity"] = fmt.Sprint(x.Quantity)
		v["window"] = fmt.Sprint(w.Window(r.Session))
		members := "["
		for i, m := range w.Schedule.TeamOf(r.Session) {
			if i > 0 {
				members += ","
			}
			members += fmt.Sprint(int64(m))
		}
		v["members"] = members + "]"
	}
	if r.Kind == lootfaults.Kinds.ClaimItem {
		v["player"], v["intent"] = fmt.Sprint(int64(r.Player)), string(r.Intent)
	}
	return v
}

// opOf is the spec operation of request kind k.
func opOf(k lootfaults.Kind) string { return k.String() }

// Players are the players that claim in session x (members and outsiders),
// sorted: the ones whose claims the sampler reads.
func (w Workload) Players(x int) []lootfaults.PlayerID {
	var ps []lootfaults.PlayerID
	for _, r := range w.Schedule.Requests {
		if r.Kind == lootfaults.Kinds.ClaimItem && r.Session == x && !slices.Contains(ps, r.Player) {
			ps = append(ps, r.Player)
		}
	}
	slices.Sort(ps)
	return ps
}
