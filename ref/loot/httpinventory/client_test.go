package httpinventory_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/httpinventory"
)

// Each test answers the client with a handler of its own; the client
// against the real protocol server under every fault is tested where that
// server lives (props/loot/service/inventory, client_test.go).

func repro(t *testing.T) string {
	return fmt.Sprintf("reproduce: go test ./ref/loot/httpinventory -run '^%s$'", t.Name())
}

// seen is what a test inventory received.
type seen struct {
	mu   sync.Mutex
	keys []string
	body []map[string]any
}

func (s *seen) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// inventoryAnswering serves every request with status and text (the
// protocol's answer for the request's key when text is "").
func inventoryAnswering(t *testing.T, status int, text string) (*httptest.Server, *seen) {
	t.Helper()
	s := &seen{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		json.NewDecoder(r.Body).Decode(&b)
		key := r.Header.Get("Idempotency-Key")
		s.mu.Lock()
		s.keys, s.body = append(s.keys, key), append(s.body, b)
		s.mu.Unlock()
		w.WriteHeader(status)
		if text == "" {
			text = fmt.Sprintf(`{"result":"applied","grantNo":%q}`, key)
		}
		fmt.Fprint(w, text)
	}))
	t.Cleanup(srv.Close)
	return srv, s
}

func newClient(t *testing.T, url string) *httpinventory.Client {
	t.Helper()
	c, err := httpinventory.New(httpinventory.Options{URL: url, Timeout: time.Second, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func grant() loot.Grant {
	return loot.Grant{No: loot.GrantNo("S1", 1001, "SWORD"), Session: "S1", Player: 1001, Loot: "SWORD", Quantity: 1, Rank: 1}
}

func TestDeliverSendsTheGrantNumberAsTheKeyAndTheGrantAsTheBody(t *testing.T) {
	srv, s := inventoryAnswering(t, 200, "")
	if err := newClient(t, srv.URL).Deliver(t.Context(), grant()); err != nil {
		t.Fatalf("Deliver: %v; %s", err, repro(t))
	}
	want := map[string]any{"grantNo": "S1:1001:SWORD", "sessionNo": "S1", "playerId": 1001.0, "lootCode": "SWORD", "quantity": 1.0}
	if s.n() != 1 || s.keys[0] != "S1:1001:SWORD" || fmt.Sprint(s.body[0]) != fmt.Sprint(want) {
		t.Errorf("inventory saw keys %q bodies %v, want one S1:1001:SWORD with %v; %s", s.keys, s.body, want, repro(t))
	}
}

func TestDeliverRetriesUnknownOutcomesUpToItsAttempts(t *testing.T) {
	for _, status := range []int{500, 503, 408, 429} {
		srv, s := inventoryAnswering(t, status, "busy")
		err := newClient(t, srv.URL).Deliver(t.Context(), grant())
		if err == nil || errors.Is(err, httpinventory.ErrRefused) || s.n() != httpinventory.DefaultAttempts {
			t.Errorf("status %d: %v after %d attempts, want an unknown outcome after %d; %s", status, err, s.n(), httpinventory.DefaultAttempts, repro(t))
		}
		for _, k := range s.keys {
			if k != grant().No {
				t.Errorf("status %d: a retry keyed %q, want %q every time; %s", status, k, grant().No, repro(t))
			}
		}
	}
}

func TestDeliverDoesNotRetryARefusal(t *testing.T) {
	for _, tc := range []struct {
		status int
		text   string
	}{
		{400, "bad request"},
		{422, "key reused"},
		{404, "no such path"},
		{202, `{"result":"applied","grantNo":"S1:1001:SWORD"}`}, // accepted is not applied
		{200, "ok"}, // the wrong URL: some other service's 200
		{200, `{"result":"applied","grantNo":"S9:1:X"}`}, // another grant's answer
		{200, `{"result":"queued","grantNo":"S1:1001:SWORD"}`},
	} {
		srv, s := inventoryAnswering(t, tc.status, tc.text)
		err := newClient(t, srv.URL).Deliver(t.Context(), grant())
		if !errors.Is(err, httpinventory.ErrRefused) || s.n() != 1 {
			t.Errorf("%d %s: %v after %d attempts, want ErrRefused after 1; %s", tc.status, tc.text, err, s.n(), repro(t))
		}
	}
}

func TestDeliverAcceptsAlreadyAsDelivered(t *testing.T) {
	srv, _ := inventoryAnswering(t, 200, `{"result":"already","grantNo":"S1:1001:SWORD"}`)
	if err := newClient(t, srv.URL).Deliver(t.Context(), grant()); err != nil {
		t.Errorf("Deliver of a grant the inventory already holds: %v, want nil; %s", err, repro(t))
	}
}

func TestDeliverRetriesAConnectionRefused(t *testing.T) {
	srv, _ := inventoryAnswering(t, 200, "")
	url := srv.URL
	srv.Close() // nobody listens there now
	c, err := httpinventory.New(httpinventory.Options{URL: url, Attempts: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	err = c.Deliver(t.Context(), grant())
	if err == nil || errors.Is(err, httpinventory.ErrRefused) || !strings.Contains(err.Error(), "attempt 2 of 2") {
		t.Errorf("Deliver to a closed port: %v, want an unknown outcome after 2 attempts; %s", err, repro(t))
	}
}

func TestNewRefusesAURLItCannotPost(t *testing.T) {
	for _, u := range []string{"", "inventory:8080", "ftp://h/x", "http:///x", "http://u:s3cret@h:1/%zz"} {
		_, err := httpinventory.New(httpinventory.Options{URL: u})
		if err == nil {
			t.Errorf("New(%q) took it; %s", u, repro(t))
		} else if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("New(%q): %v shows the password; %s", u, err, repro(t))
		}
	}
	if _, err := httpinventory.New(httpinventory.Options{URL: "http://h/x", Attempts: -1}); err == nil {
		t.Errorf("New took Attempts -1; %s", repro(t))
	}
}
