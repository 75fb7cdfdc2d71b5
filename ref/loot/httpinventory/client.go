// Package httpinventory is a loot.Inventory that delivers grants to an
// inventory service over HTTP: POST to the service's URL with the grant
// number as the Idempotency-Key header and the body {"grantNo",
// "sessionNo", "playerId", "lootCode", "quantity"}; the service answers
// 200 {"result": "applied" or "already", "grantNo"} once the item is
// durably in, 400 or 422 when it refuses the request. The service side of
// this protocol, with its rules in full, is the package doc of onceproof's
// props/loot/service/inventory, the inventory service mode hosts.
//
// Deliver keeps loot.Inventory's contract: nil only on a 200 that names
// the grant; anything else is an error, the grant stays PENDING, and
// compensation delivers it again with the same number, which the
// service's idempotency makes safe.
package httpinventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Defaults of Options. They are sized for a settler's own delivery, the
// one that runs right after the result is recorded:
//
//   - DefaultTimeout 2 s per attempt: a delivery is one small write on
//     the inventory's side (milliseconds when it is healthy); 2 s is 100
//     slow 20 ms round trips.
//   - DefaultAttempts 3 with DefaultBackoff 100 ms doubling: rides over a
//     blip (an inventory instance restarting behind its balancer, a
//     dropped keep-alive connection) without handing the grant to
//     compensation, whose next try comes only after the grant's lease
//     (loot.DefaultSettleLease, 30 s). Worst case 3 x 2 s + 0.1 + 0.2 s
//     = 6.3 s per grant: four grants fit in the default lease even
//     against an inventory that hangs.
//   - DefaultMaxConns 16: lootd's settle workers on its default pool
//     (64 / 4), each delivering one grant at a time.
const (
	DefaultTimeout  = 2 * time.Second
	DefaultAttempts = 3
	DefaultBackoff  = 100 * time.Millisecond
	DefaultMaxConns = 16
)

// maxAnswer bounds the answer read: a protocol answer is under 300 bytes.
const maxAnswer = 64 << 10

// ErrRefused: the inventory refused the delivery (a 4xx other than 408
// and 429, or a 200 that is not the protocol's answer: a wrong URL).
// Deliver does not retry it; compensation will, after the grant's lease,
// so an operator sees it in the retry counts and fixes the URL or the
// inventory.
var ErrRefused = errors.New("httpinventory: refused")

// Options configure a Client.
type Options struct {
	// URL is the inventory's delivery endpoint, http or https. Required.
	// User info in it is sent as basic authentication.
	URL string
	// Client sends the requests; nil: a client of the Client's own, on a
	// transport holding at most MaxConns connections to the inventory.
	Client *http.Client
	// Timeout bounds each attempt (connecting, sending, the answer).
	// Zero: DefaultTimeout.
	Timeout time.Duration
	// Attempts is how many times a settler's delivery (Grant.Attempts 0)
	// is tried. A compensation delivery (Grant.Attempts > 0) is tried
	// once: its lease is its backoff (loot.Backoff), and retrying inside
	// the call would hold the pass's later grants past their own leases.
	// Zero: DefaultAttempts.
	Attempts int
	// Backoff is the wait before the second attempt, doubling after.
	// Zero: DefaultBackoff.
	Backoff time.Duration
	// MaxConns bounds the connections to the inventory when Client is
	// nil (more deliveries at once wait for one, within their Timeout).
	// Zero: DefaultMaxConns.
	MaxConns int
	_        struct{}
}

// Client is a loot.Inventory over HTTP. Safe for concurrent use.
type Client struct {
	url      string
	hc       *http.Client
	own      *http.Transport // nil when Options.Client was given
	timeout  time.Duration
	attempts int
	backoff  time.Duration
}

var _ loot.Inventory = (*Client)(nil)

// New checks o and returns a Client. Its errors quote no password of the
// URL.
func New(o Options) (*Client, error) {
	u, err := url.Parse(o.URL)
	if err != nil {
		return nil, fmt.Errorf("httpinventory: URL: %w", errors.Unwrap(err)) // url.Error quotes the URL
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("httpinventory: URL scheme %q, want http or https", u.Scheme)
	case u.Host == "":
		return nil, errors.New("httpinventory: URL has no host")
	case o.Timeout < 0 || o.Attempts < 0 || o.Backoff < 0 || o.MaxConns < 0:
		return nil, fmt.Errorf("httpinventory: Timeout %v, Attempts %d, Backoff %v, MaxConns %d: want >= 0 (0: the default)", o.Timeout, o.Attempts, o.Backoff, o.MaxConns)
	}
	c := &Client{url: o.URL, hc: o.Client, timeout: o.Timeout, attempts: o.Attempts, backoff: o.Backoff}
	if c.timeout == 0 {
		c.timeout = DefaultTimeout
	}
	if c.attempts == 0 {
		c.attempts = DefaultAttempts
	}
	if c.backoff == 0 {
		c.backoff = DefaultBackoff
	}
	if c.hc == nil {
		n := o.MaxConns
		if n == 0 {
			n = DefaultMaxConns
		}
		c.own = http.DefaultTransport.(*http.Transport).Clone()
		c.own.MaxConnsPerHost, c.own.MaxIdleConnsPerHost = n, n
		c.hc = &http.Client{Transport: c.own}
	}
	return c, nil
}

// Close closes the idle connections of the Client's own transport.
func (c *Client) Close() {
	if c.own != nil {
		c.own.CloseIdleConnections()
	}
}

// body is the protocol's request body.
type body struct {
	GrantNo  string `json:"grantNo"`
	Session  string `json:"sessionNo"`
	Player   int64  `json:"playerId"`
	Loot     string `json:"lootCode"`
	Quantity int    `json:"quantity"`
}

// answer is the protocol's 200 body.
type answer struct {
	Result  string `json:"result"`
	GrantNo string `json:"grantNo"`
}

// Deliver implements loot.Inventory: it posts g, keyed by g.No, up to
// Options.Attempts times (once for a compensation delivery) while the
// answers leave the outcome unknown (no answer, a timeout, 408, 429, a
// 5xx), waiting Backoff, doubled each time, in between. nil: a 200 named
// g.No. An error wraps ErrRefused when the inventory refused, ctx's error
// when ctx ended, and the last attempt's failure otherwise.
func (c *Client) Deliver(ctx context.Context, g loot.Grant) error {
	payload, err := json.Marshal(body{GrantNo: g.No, Session: g.Session, Player: int64(g.Player), Loot: g.Loot, Quantity: g.Quantity})
	if err != nil {
		return fmt.Errorf("httpinventory: deliver %s: %w", g.No, err)
	}
	tries := c.attempts
	if g.Attempts > 0 {
		tries = 1
	}
	wait := c.backoff
	for i := 1; ; i++ {
		retry, err := c.post(ctx, g.No, payload)
		if err == nil {
			return nil
		}
		if !retry || i == tries {
			return fmt.Errorf("httpinventory: deliver %s (attempt %d of %d): %w", g.No, i, tries, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("httpinventory: deliver %s (after attempt %d of %d: %w): %w", g.No, i, tries, err, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

// post makes one attempt; retry says whether another may succeed.
func (c *Client) post(ctx context.Context, key string, payload []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(payload))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	// The header also makes the request replayable for net/http: a
	// request that found its kept-alive connection closed under it is
	// sent again on a new one, as the protocol allows.
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.hc.Do(req)
	if err != nil {
		return ctx.Err() == nil || errors.Is(ctx.Err(), context.DeadlineExceeded), err
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return true, fmt.Errorf("%s, reading the answer: %w", resp.Status, err)
	}
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
		var a answer
		if err := json.Unmarshal(text, &a); err != nil || (a.Result != "applied" && a.Result != "already") || a.GrantNo != key {
			return false, fmt.Errorf("%w: 200 %q is not an inventory's answer for %s (is the URL the delivery endpoint?)", ErrRefused, clip(text), key)
		}
		return false, nil
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests, code >= 500:
		return true, fmt.Errorf("%s: %q", resp.Status, clip(text))
	default:
		return false, fmt.Errorf("%w: %s: %q", ErrRefused, resp.Status, clip(text))
	}
}

// clip shortens an answer for an error message.
func clip(b []byte) string {
	const n = 200
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "..."
	}
	return string(b)
}
