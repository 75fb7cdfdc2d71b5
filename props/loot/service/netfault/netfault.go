// Package netfault puts network faults between service mode and what it
// judges: a TCP proxy in front of each upstream (the service's HTTP
// port, its database, its Redis, the inventory), on which the caller adds
// and removes toxics (latency, a stalled stream, a reset, a reply cut
// after some bytes) and partitions and heals, each when it chooses. Every
// change is recorded (Events: time, target, what, parameters) for the
// run's record file. The proxy is Shopify's toxiproxy, embedded as a
// library: no toxiproxy server or API port runs.
//
// Faults act on the bytes of TCP connections, not on requests: a toxic
// applies to every connection through the proxy, those open when it is
// added and those opened later (but see ResetPeer), until it is removed.
package netfault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// Kind is what a toxic does; its text is toxiproxy's type name.
type Kind string

const (
	// Latency delays every chunk of the stream by Toxic.Latency.
	Latency Kind = "latency"
	// Stall stops the stream's data; with Toxic.Timeout > 0 the
	// connection is closed that long after, with 0 it hangs until the
	// toxic is removed (which then closes it). toxiproxy's "timeout".
	Stall Kind = "timeout"
	// ResetPeer resets the connection (TCP RST) Toxic.Timeout after its
	// next data. A connection opened before the toxic was added is closed
	// with a FIN instead: toxiproxy sets the RST linger only when a
	// connection starts.
	ResetPeer Kind = "reset_peer"
	// CutAfter closes the connection once Toxic.Bytes bytes of the stream
	// went through: on the Downstream, a reply cut short. toxiproxy's
	// "limit_data".
	CutAfter Kind = "limit_data"
)

// Stream is a direction of a proxied connection.
type Stream string

const (
	// Upstream is client to upstream: requests.
	Upstream Stream = "upstream"
	// Downstream is upstream to client: replies.
	Downstream Stream = "downstream"
)

// Toxic is one fault on one stream of a Proxy.
type Toxic struct {
	// Name is the toxic's name on its proxy, for Remove; "" is
	// "<kind>_<stream>".
	Name   string
	Kind   Kind
	Stream Stream // "" is Downstream
	// Latency is Latency's delay (whole milliseconds: toxiproxy's unit).
	Latency time.Duration
	// Timeout is Stall's and ResetPeer's (whole milliseconds).
	Timeout time.Duration
	// Bytes is CutAfter's.
	Bytes int64
	_     struct{}
}

// Partition is how a partitioned proxy treats connections.
type Partition string

const (
	// Refuse closes the proxy's listener and every connection through
	// it: new connections are refused, open ones end.
	Refuse Partition = "refuse"
	// Hang stops both streams of every connection, open and new: the
	// proxy still accepts, and nothing gets through until Heal.
	Hang Partition = "hang"
)

// Event is one recorded change of a proxy.
type Event struct {
	At     time.Time `json:"at"`
	Target string    `json:"target"` // the proxy's name
	// Op is "add" or "remove" (a toxic), "partition" or "heal".
	Op     string `json:"op"`
	Toxic  string `json:"toxic,omitempty"` // the toxic's name
	Kind   string `json:"kind,omitempty"`  // a toxic's Kind, a partition's Partition
	Stream Stream `json:"stream,omitempty"`
	// Params are the toxic's attributes as toxiproxy takes them
	// (latency and timeout in ms, bytes).
	Params map[string]int64 `json:"params,omitempty"`
}

// Options configure a Net.
type Options struct {
	// Now stamps each Event. Required: the harness passes its clock.
	Now func() time.Time
	_   struct{}
}

// Net is a set of proxies and the record of their faults. Safe for
// concurrent use.
type Net struct {
	now func() time.Time
	srv *toxiproxy.ApiServer

	mu      sync.Mutex
	events  []Event
	proxies map[string]*Proxy
}

// New returns an empty Net.
func New(o Options) (*Net, error) {
	if o.Now == nil {
		return nil, errors.New("netfault: Options.Now is required")
	}
	return &Net{
		now:     o.Now,
		srv:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop()),
		proxies: map[string]*Proxy{},
	}, nil
}

// Proxy starts a proxy named name (the Event's Target: "service",
// "postgres", ...) on 127.0.0.1 at a free port, in front of upstream
// (host:port). Point the client at its Addr.
func (n *Net) Proxy(name, upstream string) (*Proxy, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, dup := n.proxies[name]; dup || name == "" {
		return nil, fmt.Errorf("netfault: proxy name %q is empty or taken", name)
	}
	tp := toxiproxy.NewProxy(n.srv, name, "127.0.0.1:0", upstream)
	if err := tp.Start(); err != nil {
		return nil, fmt.Errorf("netfault: proxy %s: %w", name, err)
	}
	p := &Proxy{net: n, tp: tp, name: name, addr: tp.Listen}
	n.proxies[name] = p
	return p, nil
}

// Events returns a copy of the record, in the order the changes were made.
func (n *Net) Events() []Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.events)
}

// Close stops every proxy (closing their connections). The record stays.
func (n *Net) Close() {
	n.mu.Lock()
	ps := make([]*Proxy, 0, len(n.proxies))
	for _, p := range n.proxies {
		ps = append(ps, p)
	}
	n.mu.Unlock()
	for _, p := range ps {
		p.tp.Stop()
	}
}

func (n *Net) record(e Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e.At = n.now()
	n.events = append(n.events, e)
}

// Proxy is one proxied upstream.
type Proxy struct {
	net  *Net
	tp   *toxiproxy.Proxy
	name string
	addr string

	mu          sync.Mutex // orders the changes of this proxy
	partitioned Partition  // "" when healed
}

// Addr is where clients connect (host:port).
func (p *Proxy) Addr() string { return p.addr }

// hangToxics are the two Stalls a Hang partition adds.
var hangToxics = []Toxic{
	{Name: "partition_upstream", Kind: Stall, Stream: Upstream},
	{Name: "partition_downstream", Kind: Stall, Stream: Downstream},
}

// Add adds t to the proxy and records it.
func (p *Proxy) Add(t Toxic) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	t, params, err := t.normalize()
	if err != nil {
		return fmt.Errorf("netfault: %s: %w", p.name, err)
	}
	if err := p.add(t, params); err != nil {
		return err
	}
	p.net.record(Event{Target: p.name, Op: "add", Toxic: t.Name, Kind: string(t.Kind), Stream: t.Stream, Params: params})
	return nil
}

func (p *Proxy) add(t Toxic, params map[string]int64) error {
	spec, _ := json.Marshal(map[string]any{
		"name": t.Name, "type": string(t.Kind), "stream": string(t.Stream), "toxicity": 1.0, "attributes": params,
	})
	if _, err := p.tp.Toxics.AddToxicJson(bytes.NewReader(spec)); err != nil {
		return fmt.Errorf("netfault: %s: add %s: %w", p.name, t.Name, err)
	}
	return nil
}

// Remove removes the toxic named name and records it.
func (p *Proxy) Remove(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.tp.Toxics.RemoveToxic(context.Background(), name); err != nil {
		return fmt.Errorf("netfault: %s: remove %s: %w", p.name, name, err)
	}
	p.net.record(Event{Target: p.name, Op: "remove", Toxic: name})
	return nil
}

// Partition cuts the proxy off as mode says, until Heal. A proxy already
// partitioned is an error: heal it first.
func (p *Proxy) Partition(mode Partition) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.partitioned != "" {
		return fmt.Errorf("netfault: %s: already partitioned (%s)", p.name, p.partitioned)
	}
	switch mode {
	case Refuse:
		p.tp.Stop()
	case Hang:
		for i, t := range hangToxics {
			if err := p.add(t, map[string]int64{"timeout": 0}); err != nil {
				for _, added := range hangToxics[:i] {
					p.tp.Toxics.RemoveToxic(context.Background(), added.Name)
				}
				return err
			}
		}
	default:
		return fmt.Errorf("netfault: %s: partition %q, want refuse or hang", p.name, mode)
	}
	p.partitioned = mode
	p.net.record(Event{Target: p.name, Op: "partition", Kind: string(mode)})
	return nil
}

// Heal ends a partition: a refusing proxy listens again on the same
// address, a hanging one lets data through (the connections it held are
// closed: toxiproxy ends a stalled connection when its stall is removed).
// Toxics added with Add stay. Healing a proxy that is not partitioned
// is a no-op, recorded all the same.
func (p *Proxy) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.partitioned {
	case Refuse:
		if err := p.tp.Start(); err != nil {
			return fmt.Errorf("netfault: %s: heal: listening again on %s: %w", p.name, p.addr, err)
		}
	case Hang:
		for _, t := range hangToxics {
			if err := p.tp.Toxics.RemoveToxic(context.Background(), t.Name); err != nil {
				return fmt.Errorf("netfault: %s: heal: %w", p.name, err)
			}
		}
	}
	p.partitioned = ""
	p.net.record(Event{Target: p.name, Op: "heal"})
	return nil
}

// normalize fills t's defaults and returns toxiproxy's attributes for it.
func (t Toxic) normalize() (Toxic, map[string]int64, error) {
	if t.Stream == "" {
		t.Stream = Downstream
	}
	if t.Stream != Upstream && t.Stream != Downstream {
		return t, nil, fmt.Errorf("stream %q, want upstream or downstream", t.Stream)
	}
	if t.Name == "" {
		t.Name = string(t.Kind) + "_" + string(t.Stream)
	}
	ms := func(d time.Duration) (int64, error) {
		if d < 0 || d%time.Millisecond != 0 {
			return 0, fmt.Errorf("%s %v: want whole milliseconds >= 0", t.Kind, d)
		}
		return d.Milliseconds(), nil
	}
	var (
		params = map[string]int64{}
		err    error
	)
	switch t.Kind {
	case Latency:
		params["latency"], err = ms(t.Latency)
	case Stall, ResetPeer:
		params["timeout"], err = ms(t.Timeout)
	case CutAfter:
		if t.Bytes < 0 {
			err = fmt.Errorf("%s %d bytes, want >= 0", t.Kind, t.Bytes)
		}
		params["bytes"] = t.Bytes
	default:
		err = fmt.Errorf("kind %q, want latency, timeout, reset_peer or limit_data", t.Kind)
	}
	return t, params, err
}
