package main

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	lootservice "github.com/onceproof/onceproof/props/loot/service"
	"github.com/onceproof/onceproof/props/loot/service/instance"
)

// fleetOptions reads service's -start, -instances, -skew and -ready into
// the fleet's options (Dir is the run's, set later); a bad one is bad
// input. Without -start it returns zero options.
func fleetOptions(start string, n int, skews, ready string) (instance.Options, error) {
	if start == "" {
		if skews != "" || ready != "" {
			return instance.Options{}, badf("-skew and -ready go with -start")
		}
		return instance.Options{}, nil
	}
	if n < 1 {
		return instance.Options{}, badf("-instances %d: want >= 1", n)
	}
	o := instance.Options{Command: strings.Fields(start), N: n, Ports: []string{"port"}, Ready: ready}
	if strings.Contains(start, "{internal}") || strings.Contains(ready, "{internal}") {
		o.Ports = append(o.Ports, "internal")
	}
	if skews != "" {
		for _, s := range strings.Split(skews, ",") {
			d, err := time.ParseDuration(strings.TrimSpace(s))
			if err != nil {
				return instance.Options{}, badf("-skew %q: %v", s, err)
			}
			o.Skew = append(o.Skew, d)
		}
		if len(o.Skew) > n {
			return instance.Options{}, badf("-skew: %d offsets for %d instances", len(o.Skew), n)
		}
	}
	return o, nil
}

// fleetTargets is each started instance as a target: its operations
// listener on {internal} if it has one, else its player port.
func fleetTargets(f *instance.Fleet, o instance.Options) []lootservice.Target {
	internal := o.Ports[len(o.Ports)-1]
	var out []lootservice.Target
	for i := range o.N {
		t := lootservice.Target{Player: f.URL(i, "port"), Internal: f.URL(i, internal)}
		if i < len(o.Skew) {
			t.Skew = o.Skew[i].String()
		}
		out = append(out, t)
	}
	return out
}

// depName is a dependency's name in -upstream: a placeholder's word.
var depName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseUpstreams reads -upstream, NAME=HOST:PORT,...: the dependencies
// the harness fronts with a proxy, each reached by -start's command
// through {NAME} (db and redis are the names the fault plan faults). A
// name that is not a word, is given twice or is one of the fleet's own
// placeholders, and an address that is not host:port, are bad input.
func parseUpstreams(s, start string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	if start == "" {
		return nil, badf("-upstream goes with -start: the harness can proxy a dependency only for instances it starts")
	}
	own := map[string]bool{"index": true, "dir": true, "skew": true, "port": true, "internal": true, "inventory": true}
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		name, addr, ok := strings.Cut(strings.TrimSpace(kv), "=")
		switch {
		case !ok:
			return nil, badf("-upstream: %q: want NAME=HOST:PORT", kv)
		case !depName.MatchString(name):
			return nil, badf("-upstream: name %q: want a word (letters, digits, _), as its {NAME} in -start", name)
		case own[name]:
			return nil, badf("-upstream: name %q is one of -start's own placeholders", name)
		case out[name] != "":
			return nil, badf("-upstream: name %q given twice", name)
		}
		host, port, err := net.SplitHostPort(addr)
		if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
			return nil, badf("-upstream: %s=%q: want HOST:PORT", name, addr)
		}
		if !strings.Contains(start, "{"+name+"}") {
			return nil, badf("-upstream: %s: -start's command has no {%s}, so its instances would not reach %s through the proxy", name, name, addr)
		}
		out[name] = addr
	}
	return out, nil
}
