package loot_test

import (
	"slices"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// TestChangedIntentTakesTheChangesTime: the document's upsert (ON
// DUPLICATE KEY UPDATE of the intent, created_at kept) lets 1001 hold the
// earliest place with a GREED sent at 1s and upgrade it to NEED at 7s,
// ahead of 1002's NEED declared at 3s: the tie-break rewards the first
// reflex, not the decision. The reference's claim time is the current
// intent's (a repeat keeps it, a change moves it), so 1002 wins.
func TestChangedIntentTakesTheChangesTime(t *testing.T) {
	doc := newDoc(t0)
	doc.open("S", t0.Add(claimWindow))
	doc.appNow = t0.Add(time.Second)
	doc.submitIntent("S", 1001, "GREED", 0)
	doc.appNow = t0.Add(3 * time.Second)
	doc.submitIntent("S", 1002, "NEED", 0)
	doc.appNow = t0.Add(7 * time.Second)
	doc.submitIntent("S", 1001, "NEED", 0)
	breaks(t, selectRanked(doc.intents["S"])[0] == 1001, "an upgraded claim ranked by its first row's time")

	w := newWorld(t)
	svc := w.node(loot.Config{})
	w.claiming(svc, "S", 1, loot.RuleSeeded, 1001, 1002)
	w.advance(time.Second)
	w.claim(svc, "S", 1001, loot.Greed)
	w.advance(2 * time.Second)
	w.claim(svc, "S", 1002, loot.Need)
	w.advance(4 * time.Second)
	upgraded := w.claim(svc, "S", 1001, loot.Need)
	w.advance(time.Second)
	if again := w.claim(svc, "S", 1001, loot.Need); !again.At.Equal(upgraded.At) {
		t.Errorf("a repeat of NEED moved the claim time from %v to %v: a retry must keep its place", upgraded.At, again.At)
	}
	w.advance(claimWindow)
	if st, err := svc.Settle(t.Context(), "S"); err != nil || !slices.Equal(winners(st), []loot.PlayerID{1002}) {
		t.Errorf("Settle = %v, %v; want 1002, whose NEED (3s) came before 1001's upgrade to NEED (7s)", winners(st), err)
	}
}
