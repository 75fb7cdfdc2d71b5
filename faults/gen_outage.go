package faults

import "github.com/onceproof/onceproof/engine"

// outageDeps are the dependencies an outage takes down, one each: the
// design's durable store (every Env.Durable is an Effect) and the sink
// (every Env.Credit is an Apply of opCredit; the settlement world names no
// other dependency, so the op is its own).
var outageDeps = []string{engine.DepStore, opCredit}

// outage: store-error's long failure, half its schedules (1, away from 0
// where rapid shrinks to): the store or the sink fails 10..30 consecutive
// calls (engine.Outage) from the first arrival of a settlement drawn among
// all, so it runs across that settlement, its retries (RetryAfter apart, up
// to genMaxAttempts), the other settlements that reach the dependency
// meanwhile, and the drain's passes. 10 is the shortest run issue 26 calls
// a real outage (a store's failover or restart; storeErrors' 1..4 faults
// on scattered attempts never make 4 in a row); 30 outlasts one
// settlement's 16 sends before the drain (genMaxAttempts), so a settlement
// whose every send failed meets it again at the drain, and a design that
// gives up on a store call after a few tries and acks (or drops) shows it.
// An outage is a preset of store-error rather than a family of its own, as
// in the loot world: the same harm (a call fails, nothing happened), only
// longer. Drawn last, after the sender, so no other draw of store-error,
// nor of any other family, moves.
func (g *gen) outage() {
	if g.draw(0, 1, "outage") != 1 || len(g.s.Deliveries) == 0 {
		return
	}
	d := g.s.Deliveries[g.draw(0, len(g.s.Deliveries)-1, "outage-from")]
	g.s.Outages = []engine.Outage{{
		Dep:   outageDeps[g.draw(0, len(outageDeps)-1, "outage-dep")],
		From:  d.At,
		Calls: g.draw(10, 30, "outage-calls"),
	}}
}
