package lootservice_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
	lootservice "github.com/onceproof/onceproof/props/loot/service"
)

// TestAnAlignedRecordReplaysAligned: a run with DriveOptions.Align starts
// on a multiple of it and its record says so; the record, written and
// read back, replays aligned with no Align given; a record without the
// field (one written before records kept it) replays at once, as then.
func TestAnAlignedRecordReplaysAligned(t *testing.T) {
	if testing.Short() {
		t.Skip("three runs of about 3 s against the fake")
	}
	const repro = "go test ./props/loot/service -count=1 -run TestAnAlignedRecordReplaysAligned"
	// 300 ms: not a divisor of anything the clock or a second rounds to,
	// so a start on a multiple of it by chance is one in 3e8 (ns clock).
	const align = 300 * time.Millisecond
	aligned := func(at time.Time) bool { return at.Truncate(align).Equal(at) }
	tg := startFake(t, &fake{})
	fam := lootfaults.Families.Clean
	w, err := lootservice.Generate(fam, 2, fmt.Sprintf("al%d", time.Now().UnixNano()%1e9), scale, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := lootservice.DriveOptions{Targets: []lootservice.Target{tg}, Spec: lootservice.DefaultSpec(), Now: time.Now, Align: align}
	rec, err := lootservice.Drive(context.Background(), w, string(fam), 2, o)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Run.Align != align || !aligned(rec.Run.Started) {
		t.Fatalf("a run with Align %v recorded align %v and started at %v\nTo reproduce: %s", align, rec.Run.Align, rec.Run.Started, repro)
	}
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := lootservice.ReadRecord("aligned.jsonl", &buf)
	if err != nil {
		t.Fatal(err)
	}
	o.Align = 0 // the record's, as `service -replay` without -align
	for _, c := range []struct {
		name  string
		align time.Duration
	}{{"aligned record", back.Run.Align}, {"record without the field", 0}} {
		r := back
		r.Run.Align = c.align
		again, _, err := lootservice.Replay(context.Background(), r, w.Tag+"-"+fmt.Sprint(c.align.Milliseconds()), o, lootservice.DefaultTolerance)
		if err != nil {
			t.Fatal(err)
		}
		if again.Run.Align != c.align || aligned(again.Run.Started) != (c.align > 0) {
			t.Errorf("%s (align %v): the replay recorded align %v and started at %v (on a multiple of %v: %v, want %v)\nTo reproduce: %s",
				c.name, c.align, again.Run.Align, again.Run.Started, align, aligned(again.Run.Started), c.align > 0, repro)
		}
	}
}
