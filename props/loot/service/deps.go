package lootservice

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/onceproof/onceproof/props/loot/service/netfault"
)

// Latencies are the distances between the instances and their
// dependencies, by the dependency's name (as in DepProxies): a latency
// each way on every byte, for the whole run. A dependency's entry has
// one latency, every instance's, or one per instance (instance i at the
// i-th: instances at different distances from one database, as when one
// runs in another zone). A service's races hang on them (a settle's
// autocommitted statements last as long as their round trips), so a run
// is its workload, its fault plan and these: the record's header keeps
// them and a replay that starts its instances puts them back.
type Latencies map[string][]time.Duration

// ParseLatencies reads the form String writes, -upstream-latency's:
// NAME=D[,D...][,NAME=D...], e.g. db=110ms or db=0,110ms,redis=5ms (a
// field without "=" is one more latency of the name before it).
func ParseLatencies(s string) (Latencies, error) {
	if s == "" {
		return nil, nil
	}
	out, name := Latencies{}, ""
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if n, v, ok := strings.Cut(f, "="); ok {
			if _, dup := out[n]; dup {
				return nil, fmt.Errorf("%s given twice", n)
			}
			name, f = n, v
		}
		if name == "" {
			return nil, fmt.Errorf("%q: want NAME=LATENCY[,LATENCY...]", f)
		}
		d, err := time.ParseDuration(f)
		if f == "0" {
			d, err = 0, nil
		}
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: %q is not a duration (110ms)", name, f)
		case d < 0:
			return nil, fmt.Errorf("%s: %v: a distance is >= 0", name, d)
		}
		out[name] = append(out[name], d)
	}
	return out, nil
}

// String is l in ParseLatencies' form, its names sorted ("" if empty).
func (l Latencies) String() string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(l)) {
		var ds []string
		for _, d := range l[name] {
			ds = append(ds, d.String())
		}
		parts = append(parts, name+"="+strings.Join(ds, ","))
	}
	return strings.Join(parts, ",")
}

// Check says how l does not fit a fleet of n instances whose
// dependencies are upstreams' names (nil: it fits): each name must be a
// dependency the harness fronts, with one latency or n.
func (l Latencies) Check(upstreams map[string]string, n int) error {
	for _, name := range slices.Sorted(maps.Keys(l)) {
		switch c := len(l[name]); {
		case upstreams[name] == "":
			fronted := strings.Join(slices.Sorted(maps.Keys(upstreams)), ", ")
			return fmt.Errorf("%s: not a dependency the harness fronts (-upstream names %s)", name, cmp.Or(fronted, "none"))
		case c != 1 && c != n:
			return fmt.Errorf("%s: %d latencies for %d instances: want 1 (every instance's) or %d (one each)", name, c, n, n)
		}
	}
	return nil
}

// of is instance i's latency to dependency name (0: none given).
func (l Latencies) of(name string, i int) time.Duration {
	switch ds := l[name]; len(ds) {
	case 0:
		return 0
	case 1:
		return ds[0]
	default:
		return ds[i]
	}
}

// DepProxies puts proxies of n in front of each dependency of upstreams
// (a name, "db" or "redis" for the kinds that fault them, to its
// host:port) for a fleet of instances, at the distances of latencies
// (which Check has passed): one proxy, named "dep-<name>" in n's events,
// shared by every instance when the dependency has no latency or one,
// else one per instance, "dep-<name>-<i>", each at its instance's
// latency. It returns every proxy in front of each dependency (the paths
// a dependency fault hits, Injectors.Deps) and, per instance, the
// address it is to reach each dependency through (instance i's values of
// the fleet's placeholders {db}, {redis}: instance.Options.InstanceVars).
func DepProxies(n *netfault.Net, upstreams map[string]string, latencies Latencies, instances int) (map[string][]*netfault.Proxy, []map[string]string, error) {
	if err := latencies.Check(upstreams, instances); err != nil {
		return nil, nil, err
	}
	ps, vars := map[string][]*netfault.Proxy{}, make([]map[string]string, instances)
	for i := range vars {
		vars[i] = map[string]string{}
	}
	for _, name := range slices.Sorted(maps.Keys(upstreams)) {
		own := len(latencies[name]) > 1
		for i := range instances {
			if !own && i > 0 {
				vars[i][name] = vars[0][name]
				continue
			}
			label := "dep-" + name
			if own {
				label = fmt.Sprintf("%s-%d", label, i)
			}
			p, err := n.Proxy(label, upstreams[name])
			if err != nil {
				return nil, nil, err
			}
			if d := latencies.of(name, i); d > 0 {
				// Named apart from the faults' toxics (f-...), which a
				// db-latency fault adds on top of the distance.
				for _, s := range []netfault.Stream{netfault.Upstream, netfault.Downstream} {
					if err := p.Add(netfault.Toxic{Name: "distance-" + string(s), Kind: netfault.Latency, Stream: s, Latency: d}); err != nil {
						return nil, nil, err
					}
				}
			}
			ps[name], vars[i][name] = append(ps[name], p), p.Addr()
		}
	}
	return ps, vars, nil
}
