package main

import (
	"context"
	"io"
	"testing"
	"time"
)

// TestClockSkewMovesTheProcessClock: -clock-skew reaches what reads the
// process's own clock, -dev's store among them.
func TestClockSkewMovesTheProcessClock(t *testing.T) {
	c, err := parseConfig([]string{"-dev", "-clock-skew", "1h"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	be, err := openBackend(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	defer be.close()
	now, err := be.now(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// A minute's margin either side of the hour: the reads between are
	// microseconds apart, a loaded machine's pause far less than that.
	if d := time.Until(now); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("-dev's store reads %v ahead of the wall clock under -clock-skew 1h\nTo reproduce: go test ./cmd/lootd -run TestClockSkewMovesTheProcessClock", d)
	}
}
