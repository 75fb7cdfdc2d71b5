package inventory

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Outcome is what the server did with one delivery.
type Outcome string

const (
	// Applied: the key's first well-formed delivery that was not failed;
	// the item went in (whatever reply the fault then allowed).
	Applied Outcome = "applied"
	// Repeat: the key was applied before, with the same body; nothing
	// changed (answered "already").
	Repeat Outcome = "already"
	// Failed: the plan's Fail; answered 503, nothing applied.
	Failed Outcome = "failed"
	// Refused: a 4xx (Detail says why); nothing applied.
	Refused Outcome = "refused"
)

// Delivery is one request as the server received it: the record's unit.
type Delivery struct {
	// Index is the arrival order, from 0, over every request received.
	Index int `json:"index"`
	// Key is the Idempotency-Key header (the grant number).
	Key      string `json:"key"`
	Session  string `json:"sessionNo,omitempty"`
	Player   int64  `json:"playerId,omitempty"`
	Loot     string `json:"lootCode,omitempty"`
	Quantity int    `json:"quantity,omitempty"`
	// At is Options.Now when the request's body was read.
	At      time.Time `json:"at"`
	Outcome Outcome   `json:"outcome"`
	// Fault is the plan's fault for it (None for a Refused request: the
	// plan is not asked about a malformed one).
	Fault Fault `json:"fault,omitempty"`
	// Status is the HTTP status the server answers, 0 when it writes
	// none (LoseReply). A TimeoutAfterApply's 200 is written after the
	// hold, when the client may have gone.
	Status int `json:"status"`
	// Detail says why a request was Refused.
	Detail string `json:"detail,omitempty"`
}

// ledgerFile is WriteJSON's document; Version changes when a field's
// meaning does.
type ledgerFile struct {
	Version    int        `json:"version"`
	Deliveries []Delivery `json:"deliveries"`
}

const ledgerVersion = 1

// WriteJSON writes ds (Server.Deliveries) as the record file's inventory
// document, which ReadJSON reads back.
func WriteJSON(w io.Writer, ds []Delivery) error {
	if ds == nil {
		ds = []Delivery{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ledgerFile{Version: ledgerVersion, Deliveries: ds})
}

// ReadJSON reads what WriteJSON wrote. Another version, or a field this
// version does not know, is an error: a record is not read by guessing.
func ReadJSON(r io.Reader) ([]Delivery, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var f ledgerFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("inventory: ledger: %w", err)
	}
	if f.Version != ledgerVersion {
		return nil, fmt.Errorf("inventory: ledger version %d, want %d", f.Version, ledgerVersion)
	}
	return f.Deliveries, nil
}
