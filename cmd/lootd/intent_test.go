package main

import (
	"testing"
	"time"
)

// TestIntentChangeMovesClaimedAtARepeatKeepsIt: the claim handler answers
// the claim time the Service recorded, which is the current intent's: a
// repeat of the same intent (a retry, a double click) keeps it, a change
// (an upgrade from GREED to NEED) moves it to the change's write, so an
// early GREED cannot hold its place for a NEED sent later.
func TestIntentChangeMovesClaimedAtARepeatKeepsIt(t *testing.T) {
	h := newHarness(t, nil)
	h.claiming(spec("CHANGE-1", 1, 1001))
	at := func(what, body string) time.Time {
		t.Helper()
		st, out := h.claim("1001", body)
		s, _ := out["claimedAt"].(string)
		c, err := time.Parse(time.RFC3339Nano, s)
		if st != 200 || err != nil {
			t.Fatalf("%s: %d %v, claimedAt: %v (go test -run '^TestIntentChangeMovesClaimedAtARepeatKeepsIt$' ./cmd/lootd/)", what, st, out, err)
		}
		return c
	}
	first := at("GREED", `{"sessionNo":"CHANGE-1","intentType":"GREED"}`)
	h.clock.Advance(time.Second)
	if again := at("GREED again", `{"sessionNo":"CHANGE-1","intentType":"GREED"}`); !again.Equal(first) {
		t.Errorf("a repeated GREED answered claimedAt %s, want the first's %s: a retry keeps its place", again, first)
	}
	h.clock.Advance(time.Second)
	if up := at("NEED", `{"sessionNo":"CHANGE-1","intentType":"NEED"}`); !up.Equal(first.Add(2 * time.Second)) {
		t.Errorf("an upgrade to NEED answered claimedAt %s, want the change's write %s: the claim time is the current intent's", up, first.Add(2*time.Second))
	}
}
