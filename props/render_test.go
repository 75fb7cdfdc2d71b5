package props

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/onceproof/onceproof/engine"
	"github.com/onceproof/onceproof/faults"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the code")

const memoCrash = `family crash
nodes 2
retry 250ms
max-attempts 16
settle s0 player=1 room=1 match=1 round=1 kind=final net=-10 final=true seq=1
settle s1 player=1 room=2 match=2 round=1 kind=instant net=20 final=false seq=2
deliver at=0s s0 node=0
deliver at=1s s1 node=1
fault attempt=0 effect=0 crash-after
fault attempt=2 effect=0 fail
`

func TestRenderGolden(t *testing.T) {
	s, err := faults.World.Parse(memoCrash)
	if err != nil {
		t.Fatal(err)
	}
	h := faults.Run(memo, s, faults.RunOptions{})
	r := Judge(h)
	got := Timeline(h, r) + "\n" + mermaid(h, r)
	file := filepath.Join("testdata", "render-memo-crash.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./props -run TestRenderGolden -update)", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("rendering changed (-golden +now); review and run go test ./props -run TestRenderGolden -update:\n%s", diff)
	}
}

func TestMermaidMessagesCarryNoSyntax(t *testing.T) {
	s, err := faults.World.Parse(memoCrash)
	if err != nil {
		t.Fatal(err)
	}
	h := faults.Run(memo, s, faults.RunOptions{})
	// A design's error text may read like this.
	h.Events[0] = faults.Event{Kind: engine.EvEffect, Op: "claim", Err: "a; b # c <d>", Msg: -1, Attempt: 0}
	if m := mermaid(h, Judge(h)); !strings.Contains(m, "N0->>D: claim (error: a, b no. c (d))") {
		t.Errorf("the error text is not in the diagram, made safe:\n%s", m)
	}
	for _, line := range strings.Split(mermaid(h, Judge(h)), "\n")[1:] {
		_, msg, _ := strings.Cut(line, ":")
		if strings.ContainsAny(msg, ";#<>") {
			t.Errorf("mermaid message carries syntax: %q", line)
		}
	}
}
