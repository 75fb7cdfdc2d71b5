package lootfaults

import (
	"slices"
	"time"

	"github.com/onceproof/onceproof/engine"
)

// The loot world's parts of shrinking (engine.Shrink runs the rest):
// dropping sessions and requests, and renaming players to small values;
// checkWorld keeps every candidate a world that can happen.

// clone copies s deeply.
func clone(s Schedule) Schedule {
	s.Frame = engine.CloneFrame(s.Frame)
	s.Team = slices.Clone(s.Team)
	s.Fairness = slices.Clone(s.Fairness)
	s.Skews = slices.Clone(s.Skews)
	s.Sessions = slices.Clone(s.Sessions)
	for i := range s.Sessions {
		s.Sessions[i].Members = slices.Clone(s.Sessions[i].Members)
		s.Sessions[i].Bumps = slices.Clone(s.Sessions[i].Bumps)
	}
	s.Requests = slices.Clone(s.Requests)
	return s
}

// drops are the shrinker's first passes: whole sessions (with their
// requests), then requests (with their deliveries).
func drops(s Schedule) []engine.Drop[Schedule] {
	return []engine.Drop[Schedule]{
		{N: len(s.Sessions), Apply: dropSessions},
		{N: len(s.Requests), Apply: dropRequests},
	}
}

func dropSessions(s Schedule, i, j int) (Schedule, bool) {
	c := clone(s)
	c.Sessions = append(c.Sessions[:i:i], c.Sessions[j:]...)
	for x := range c.Sessions {
		c.Sessions[x].ID = x
	}
	keep := make([]bool, len(s.Requests))
	for k, r := range s.Requests {
		keep[k] = r.Session < i || r.Session >= j
	}
	c = keepRequests(c, keep)
	for k := range c.Requests {
		if r := &c.Requests[k]; r.Session >= j {
			r.Session -= j - i
		}
	}
	return c, len(c.Sessions) > 0
}

func dropRequests(s Schedule, i, j int) (Schedule, bool) {
	keep := make([]bool, len(s.Requests))
	for k := range keep {
		keep[k] = k < i || k >= j
	}
	c := keepRequests(clone(s), keep)
	return c, len(c.Requests) > 0
}

// keepRequests keeps the requests keep says, renumbered, and the
// deliveries of those (with the faults on them).
func keepRequests(s Schedule, keep []bool) Schedule {
	index := make([]int, len(keep))
	var rs []Request
	for k, r := range s.Requests {
		index[k] = -1
		if keep[k] {
			index[k] = len(rs)
			r.ID = len(rs)
			rs = append(rs, r)
		}
	}
	s.Frame = engine.KeepDeliveries(s.Frame, func(d int) bool { return keep[s.Deliveries[d].Msg] })
	for i := range s.Deliveries {
		s.Deliveries[i].Msg = index[s.Deliveries[i].Msg]
	}
	s.Requests = rs
	return s
}

// canonical renames the players to 1, 2, 3, ... (members first, in their
// order, then the members only later sessions' snapshots have, then
// outsiders), drops fairness records of players no request names and
// records of 0 wins, and zero skews. It reports whether anything changed.
func canonical(s Schedule) (Schedule, bool) {
	c := clone(s)
	names := map[PlayerID]PlayerID{}
	var outsiders []PlayerID
	for _, r := range s.Requests {
		if r.Kind == Kinds.ClaimItem && !s.Member(r.Player) && !slices.Contains(outsiders, r.Player) {
			outsiders = append(outsiders, r.Player)
		}
	}
	slices.Sort(outsiders)
	order := slices.Clone(s.Team)
	for _, x := range s.Sessions {
		for _, p := range x.Members {
			if !slices.Contains(order, p) {
				order = append(order, p)
			}
		}
	}
	for i, p := range append(order, outsiders...) {
		names[p] = PlayerID(i + 1)
	}
	for i := range c.Team {
		c.Team[i] = names[c.Team[i]]
	}
	renamed := false
	for i := range c.Sessions {
		x := &c.Sessions[i]
		for k := range x.Members {
			x.Members[k] = names[x.Members[k]]
		}
		slices.Sort(x.Members)
		for k := range x.Bumps {
			x.Bumps[k].Player = names[x.Bumps[k].Player]
		}
		slices.SortFunc(x.Bumps, func(a, b Fair) int { return int(a.Player - b.Player) })
		renamed = renamed || !slices.Equal(x.Members, s.Sessions[i].Members) || !slices.Equal(x.Bumps, s.Sessions[i].Bumps)
	}
	for i := range c.Requests {
		if r := &c.Requests[i]; r.Kind == Kinds.ClaimItem {
			r.Player = names[r.Player]
		}
	}
	var fair []Fair
	for _, f := range s.Fairness {
		if n, ok := names[f.Player]; ok && f.Wins != 0 {
			fair = append(fair, Fair{n, f.Wins})
		}
	}
	slices.SortFunc(fair, func(a, b Fair) int { return int(a.Player - b.Player) })
	c.Fairness = fair
	if !slices.ContainsFunc(c.Skews, func(d time.Duration) bool { return d != 0 }) {
		c.Skews = nil
	}
	changed := renamed || !slices.Equal(c.Team, s.Team) || !slices.Equal(c.Requests, s.Requests) || !slices.Equal(c.Fairness, s.Fairness) || len(c.Skews) != len(s.Skews)
	return c, changed
}
