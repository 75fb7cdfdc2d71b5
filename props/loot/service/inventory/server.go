package inventory

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Path is the server's delivery endpoint.
const Path = "/deliveries"

// DefaultHold is how long a TimeoutAfterApply holds its reply when
// Options.Hold is zero: above any sane client timeout for one small write
// (lootd's is at most 2 s), so the client gives up first; a client that
// hangs up ends the hold at once.
const DefaultHold = 30 * time.Second

// maxBody bounds a delivery's body: the protocol's five fields are under
// 400 bytes (a grant number is at most 150), so 64 KiB is only a guard.
const maxBody = 64 << 10

// Options configure a Server.
type Options struct {
	// Now stamps each delivery (Delivery.At). Required: the harness
	// passes its clock.
	Now func() time.Time
	// Plan gives each well-formed delivery its fault; nil: None for all.
	// SetPlan replaces it while the server runs.
	Plan Plan
	// Hold is how long TimeoutAfterApply holds a reply; zero: DefaultHold.
	Hold time.Duration
	_    struct{}
}

// Server is the inventory: an http.Handler serving Path, and, when
// built by Start, its own listener on loopback. Safe for concurrent use.
type Server struct {
	now  func() time.Time
	hold time.Duration

	mu      sync.Mutex
	plan    Plan
	ledger  []Delivery
	applied map[string]request // key -> the body applied under it
	seen    map[string]int     // key -> well-formed deliveries so far

	hs  *http.Server // nil unless Start built it
	url string
}

// request is the protocol's body.
type request struct {
	GrantNo  string `json:"grantNo"`
	Session  string `json:"sessionNo"`
	Player   int64  `json:"playerId"`
	Loot     string `json:"lootCode"`
	Quantity int    `json:"quantity"`
}

// answer is the protocol's 200 body.
type answer struct {
	Result  Outcome `json:"result"`
	GrantNo string  `json:"grantNo"`
}

// New returns a Server that serves no listener of its own (mount it on
// yours, under Path).
func New(o Options) (*Server, error) {
	if o.Now == nil {
		return nil, errors.New("inventory: Options.Now is required")
	}
	if o.Hold < 0 {
		return nil, fmt.Errorf("inventory: Options.Hold %v < 0", o.Hold)
	}
	if o.Hold == 0 {
		o.Hold = DefaultHold
	}
	return &Server{now: o.Now, hold: o.Hold, plan: o.Plan, applied: map[string]request{}, seen: map[string]int{}}, nil
}

// Start returns a Server listening on 127.0.0.1 at a free port; URL is
// its endpoint. Close it when done.
func Start(o Options) (*Server, error) {
	s, err := New(o)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("inventory: listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(Path, s)
	// No write timeout: TimeoutAfterApply holds replies on purpose. A
	// lost reply's hijacked connection logs nothing; what else the
	// server would log is a client's broken request, which the ledger
	// records.
	s.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	s.url = "http://" + ln.Addr().String() + Path
	go s.hs.Serve(ln)
	return s, nil
}

// URL is the delivery endpoint of a Server built by Start ("" otherwise).
func (s *Server) URL() string { return s.url }

// Close stops a Server built by Start: its listener and every connection,
// which ends held replies. The ledger stays readable.
func (s *Server) Close() error {
	if s.hs == nil {
		return nil
	}
	return s.hs.Close()
}

// SetPlan replaces the fault plan (nil: None) for the deliveries that
// arrive from now on.
func (s *Server) SetPlan(p Plan) {
	s.mu.Lock()
	s.plan = p
	s.mu.Unlock()
}

// Deliveries returns a copy of the ledger in arrival order.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ledger)
}

// ServeHTTP implements the protocol (see the package doc).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	req, bad := readRequest(r)
	d, fault := s.record(r.Header.Get("Idempotency-Key"), req, bad)
	switch {
	case d.Outcome == Refused || d.Outcome == Failed:
		http.Error(w, d.Detail, d.Status)
		return
	case fault == LoseReply:
		// The item is in; the client must not learn it. Hijacking the
		// connection and closing it sends no byte of a reply.
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
			return
		}
		panic(http.ErrAbortHandler) // HTTP/2: the stream is reset instead
	case fault == TimeoutAfterApply:
		t := time.NewTimer(s.hold)
		defer t.Stop()
		select {
		case <-r.Context().Done(): // the client gave up, as planned
			return
		case <-t.C:
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(answer{Result: d.Outcome, GrantNo: d.Key})
}

// readRequest reads and checks a delivery's body; bad says why it breaks
// the protocol ("" when it keeps it).
func readRequest(r *http.Request) (req request, bad string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	switch {
	case err != nil:
		return req, "reading the body: " + err.Error()
	case len(body) > maxBody:
		return req, fmt.Sprintf("body over %d bytes", maxBody)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return req, "body: " + err.Error()
	}
	switch {
	case req.GrantNo == "":
		return req, "grantNo missing"
	case req.Session == "" || req.Loot == "":
		return req, "sessionNo and lootCode are required"
	case req.Player <= 0:
		return req, fmt.Sprintf("playerId %d, want > 0", req.Player)
	case req.Quantity < 1:
		return req, fmt.Sprintf("quantity %d, want >= 1", req.Quantity)
	}
	return req, ""
}

// record decides one delivery under the lock: its outcome (applying it
// if it is the key's first), the plan's fault, and its ledger entry.
func (s *Server) record(key string, req request, bad string) (Delivery, Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := Delivery{
		Index: len(s.ledger), Key: key, Session: req.Session, Player: req.Player,
		Loot: req.Loot, Quantity: req.Quantity, At: s.now(),
	}
	switch {
	case key == "":
		bad = "Idempotency-Key header missing"
	case bad == "" && req.GrantNo != key:
		bad = fmt.Sprintf("grantNo %q is not the Idempotency-Key %q", req.GrantNo, key)
	}
	prev, done := s.applied[key]
	switch {
	case bad != "":
		d.Outcome, d.Status, d.Detail = Refused, http.StatusBadRequest, bad
	case done && prev != req:
		d.Outcome, d.Status = Refused, http.StatusUnprocessableEntity
		d.Detail = fmt.Sprintf("key %q was applied with another body (%+v)", key, prev)
	default:
		if s.plan != nil {
			d.Fault = s.plan(d.Index, key, s.seen[key])
		}
		s.seen[key]++
		switch {
		case d.Fault == Fail:
			d.Outcome, d.Status, d.Detail = Failed, http.StatusServiceUnavailable, "injected failure: nothing applied"
		case done:
			d.Outcome, d.Status = Repeat, http.StatusOK
		default:
			s.applied[key] = req
			d.Outcome, d.Status = Applied, http.StatusOK
		}
		if d.Fault == LoseReply {
			d.Status = 0
		}
	}
	s.ledger = append(s.ledger, d)
	return d, d.Fault
}
