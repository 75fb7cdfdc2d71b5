package lootfaults

import "github.com/onceproof/onceproof/engine"

// outageDeps are the dependencies an outage takes down, one each: the
// store, the lock service, the inventory (run.go's Dependency).
var outageDeps = []string{engine.DepStore, depLock, depInventory}

// outage: store-error's long failure, half its schedules (1, away from 0
// where rapid shrinks to): one dependency fails 10..30 consecutive calls
// (engine.Outage) from the first arrival of a request of any kind, so it
// runs across that request, its retries (RetryAfter apart, up to
// maxAttempts), the other requests that reach the dependency meanwhile,
// compensation, and the drain's passes. 10 is the shortest run the issue
// calls a real outage (a dependency's failover or restart; a few faults
// never make 4 in a row); 30 outlasts one request's 16 sends before the
// drain (maxAttempts), so a request whose every send failed before the
// drain meets it again after, and a design that gives up on an item, a
// lease or a request after a few tries shows it. An outage is a preset of
// store-error rather than a family of its own: it is the same harm (a call
// fails, nothing happened), only longer, and a family more would cost
// every design's matrix a column.
func (g *gen) outage() {
	if g.draw(0, 1, "outage") != 1 {
		return
	}
	r := g.draw(0, len(g.s.Requests)-1, "outage-from")
	o := engine.Outage{Dep: outageDeps[g.draw(0, len(outageDeps)-1, "outage-dep")], Calls: g.draw(10, 30, "outage-calls")}
	for _, d := range g.s.Deliveries {
		if d.Msg == r {
			o.From = d.At
			break
		}
	}
	g.s.Outages = []engine.Outage{o}
}
