package main

import (
	"strings"
	"testing"
)

// TestServiceUpstreamBadInputIsExit2: -upstream's dependencies are
// checked before anything starts, each error naming the field.
func TestServiceUpstreamBadInputIsExit2(t *testing.T) {
	start := "lootd -listen 127.0.0.1:{port} -db postgres://u@{db}/x -redis redis://{redis}/0"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-target", "player=http://a,internal=http://b", "-upstream", "db=127.0.0.1:5432"}, "-upstream goes with -start"},
		{[]string{"-start", start, "-upstream", "db"}, `-upstream: "db": want NAME=HOST:PORT`},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1"}, `-upstream: db="127.0.0.1": want HOST:PORT`},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:http"}, `-upstream: db="127.0.0.1:http": want HOST:PORT`},
		{[]string{"-start", start, "-upstream", "d-b=127.0.0.1:5432"}, `-upstream: name "d-b": want a word`},
		{[]string{"-start", start, "-upstream", "port=127.0.0.1:5432"}, `-upstream: name "port" is one of -start's own placeholders`},
		{[]string{"-start", start, "-upstream", "db=127.0.0.1:1,db=127.0.0.1:2"}, `-upstream: name "db" given twice`},
		{[]string{"-start", "lootd -listen 127.0.0.1:{port} -db postgres://u@{db}/x", "-upstream", "db=127.0.0.1:1,redis=127.0.0.1:2"}, "-upstream: redis: -start's command has no {redis}"},
		{[]string{"-start", start, "-faults", "deps,disk"}, `-faults: "disk": want none or a list of net, inventory, process, deps`},
	} {
		code, _, stderr := serviceRunArgs(c.args...)
		if code != exitBadUse || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("service %q = exit %d, stderr %q; want exit 2 and one line with %q\nTo reproduce: go test ./cmd/onceproof -run TestServiceUpstreamBadInputIsExit2", c.args, code, stderr, c.want)
		}
	}
}
