package engine_test

import (
	"strings"
	"testing"

	"github.com/onceproof/onceproof/engine"
)

// outageOf is i0 sent once to node 0 with the toy's ledger down for calls
// consecutive apply calls from the start (the toy names no dependencies,
// so an Apply's op is its dependency).
func outageOf(calls string) string {
	return toyHeader(famError, 1) + "inc i0 amount=1\ndeliver at=0s i0 node=0\noutage dep=apply from=0s calls=" + calls + "\n"
}

// countEvents counts h's events of kind k.
func countEvents(h toyHistory, k engine.EventKind) int {
	n := 0
	for _, e := range h.Events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestOutageFailsItsRunOfCallsAndPrintsBack: an outage of 3 calls fails
// the first 3 sends of a keyed increment (max-attempts 4) and the 4th
// applies it; its line prints and parses back.
func TestOutageFailsItsRunOfCallsAndPrintsBack(t *testing.T) {
	const repro = "go test -run '^TestOutageFailsItsRunOfCallsAndPrintsBack$' ./engine"
	s, err := toyParse(outageOf("3"))
	if err != nil {
		t.Fatalf("%v (%s)", err, repro)
	}
	text := toyFormat(s)
	if !strings.Contains(text, "outage dep=apply from=0s calls=3\n") {
		t.Fatalf("the outage does not print back (%s):\n%s", repro, text)
	}
	if back, err := toyParse(text); err != nil || len(back.Outages) != 1 || back.Outages[0] != s.Outages[0] {
		t.Fatalf("the outage does not parse back: %v %v (%s):\n%s", back.Outages, err, repro, text)
	}
	h := toyRun(keyed{}, s, engine.RunOptions{})
	if f, a := countEvents(h, engine.EvFault), countEvents(h, evApply); f != 3 || a != 1 {
		t.Errorf("%d calls failed and %d applied, want 3 and 1 (%s):\n%s", f, a, repro, text)
	}
}

// TestDrainOutlastsAnOutage: an outage of 10 calls outlasts the sender's
// 4 sends and the one drain pass the toy asks for (4 more); the drain runs
// passes while the outage fails calls, so the increment is applied and the
// sender never gives up. Before, the run ended with the increment lost.
func TestDrainOutlastsAnOutage(t *testing.T) {
	const repro = "go test -run '^TestDrainOutlastsAnOutage$' ./engine"
	s, err := toyParse(outageOf("10"))
	if err != nil {
		t.Fatalf("%v (%s)", err, repro)
	}
	h := toyRun(keyed{}, s, engine.RunOptions{})
	if f, a, g := countEvents(h, engine.EvFault), countEvents(h, evApply), countEvents(h, engine.EvGiveUp); f != 10 || a != 1 || g != 0 {
		t.Errorf("%d calls failed, %d applied, %d given up, want 10, 1 and 0 (%s):\n%s", f, a, g, repro, toyFormat(s))
	}
}

// TestValidateRejectsBadOutages: no outage in a concurrent schedule, none
// of 0 calls, none without a dependency.
func TestValidateRejectsBadOutages(t *testing.T) {
	f := engine.Frame{Nodes: 1, RetryAfter: 1, MaxAttempts: 1}
	for _, c := range []struct {
		o          engine.Outage
		concurrent bool
		want       string
	}{
		{engine.Outage{Dep: "store", Calls: 1}, true, "concurrent"},
		{engine.Outage{Dep: "store", Calls: 0}, false, "calls"},
		{engine.Outage{Dep: "", Calls: 1}, false, "dependency"},
	} {
		g := f
		g.Concurrent, g.Outages = c.concurrent, []engine.Outage{c.o}
		if err := engine.ValidateFrame(g, engine.Messages{N: 0, Letter: "i", Noun: "increment"}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v (concurrent %v): %v, want an error about %s (go test -run '^TestValidateRejectsBadOutages$' ./engine)", c.o, c.concurrent, err, c.want)
		}
	}
}
