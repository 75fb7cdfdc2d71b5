package main

import (
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
