package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// Request limits, each derived from what a valid request can hold.
const (
	// maxMembers bounds a team snapshot: a 40-player raid is the largest
	// team a drop is usually shared by; 1024 leaves room for world events
	// and keeps an open's body and its member rows small.
	maxMembers = 1024
	// maxCodeJSON is a code (loot.MaxCodeLen bytes) written entirely as
	// \uXXXX escapes: 6 bytes a byte.
	maxCodeJSON = 6 * loot.MaxCodeLen
	// smallBody bounds the bodies that carry a session number and an
	// intent: one code (384) plus field names and punctuation (< 100) is
	// under 512; twice that leaves room for white space.
	smallBody = 1 << 10
	// openBody bounds an open: maxMembers ids of up to 19 digits, a comma
	// and a space each (22 KiB) and three codes (1.2 KiB) are under 24 KiB;
	// 64 KiB leaves room for indentation.
	openBody = 64 << 10
	// maxClaimWindow bounds claimWindowSeconds: the source document uses 15
	// to 60 seconds; a day is certainly a mistake.
	maxClaimWindow = 24 * time.Hour
	// retryAfter is the Retry-After of a 503: the store did not answer, and
	// a second is longer than a failover of the connection pool takes to
	// be tried again, short enough for a player's click.
	retryAfter = 1
)

// apiError is every error body: a stable code and one line for people.
//
// Errors are {"code","message"}:
//
//   - 400 bad input, 401, 404 (to a player, a session they are not a member
//     of is 404 too), 409 for the session's state, 413.
//   - 503 outcome_unknown with Retry-After: repeat the request (every
//     endpoint is idempotent). It is also the answer to a request the store
//     has not finished within its budget: 2s for a claim, 5s for other
//     operations, -lock-ttl for a settle (timeouts.go).
//   - 503 too_many_connections, then the connection is closed: a connection
//     over a listener's cap.
//
// An open is 201, its repeat 200 (the recorded session); a claim is 200
// with "created" true for the first, false for a repeat; a repeated start
// or cancel is 200; a settle of a settled session is 200
// "already_settled".
type apiError struct {
	status  int
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func badRequest(code, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, Code: code, Message: fmt.Sprintf(format, args...)}
}

// lootErrors maps the loot sentinels to statuses, codes and the message a
// client gets. Order matters only for errors that wrap two: none of the
// Service's does. The messages are fixed: the error's own text names the
// store it came from ("mysql: ...", "loot/postgres: ..."), which is the
// log's to know, not a client's.
var lootErrors = []struct {
	err     error
	status  int
	code    string
	message string
}{
	{loot.ErrNotFound, http.StatusNotFound, "not_found", "no such session"},
	{loot.ErrNotMember, http.StatusForbidden, "not_member", "the player is not a member of the session"},
	{loot.ErrClaimsClosed, http.StatusConflict, "claims_closed", "the session does not take claims (not started, past its deadline, or over)"},
	{loot.ErrNotDue, http.StatusConflict, "not_due", "not due: the session's deadline has not passed"},
	{loot.ErrAlreadySettling, http.StatusConflict, "already_settling", "another settler holds the session"},
	{loot.ErrAlreadySettled, http.StatusConflict, "already_settled", "the session's result is recorded"},
	{loot.ErrCanceled, http.StatusConflict, "canceled", "the session was canceled"},
	{loot.ErrConflict, http.StatusConflict, "conflict", "a session with this number exists with another definition"},
	{loot.ErrStaleFence, http.StatusConflict, "taken_over", "another settler took the session over"},
	{loot.ErrBadArgument, http.StatusBadRequest, "bad_argument", "invalid request"},
	{loot.ErrOutcomeUnknown, http.StatusServiceUnavailable, "outcome_unknown", "the store did not confirm the outcome; repeat the same request (it is idempotent)"},
}

// toAPIError maps an error of the Service (or of the store's clock) to
// what the client gets: the sentinel's fixed message, and for a bad
// argument what is wrong with it (the text loot.ErrBadArgument's makers
// put after it: "quantity 0, want >= 1"). Anything that is not a definite
// answer is outcome_unknown: every endpoint is safe to repeat, so the
// client retries the same request. The whole error goes to the log.
func toAPIError(err error) *apiError {
	if e, ok := errors.AsType[*apiError](err); ok {
		return e
	}
	for _, m := range lootErrors {
		if errors.Is(err, m.err) {
			msg := m.message
			if m.err == loot.ErrBadArgument {
				msg += detail(err, m.err)
			}
			return &apiError{status: m.status, Code: m.code, Message: msg}
		}
	}
	unknown := lootErrors[len(lootErrors)-1]
	return &apiError{status: unknown.status, Code: unknown.code, Message: unknown.message}
}

// toPlayerError is toAPIError for the player listener, which answers a
// session the player is not a member of as one that does not exist: 403
// not_member would tell a player which session numbers are in use. Both
// are final refusals, so the client does the same either way; the log and
// the metrics keep them apart, as the internal listener does.
func toPlayerError(err error) *apiError {
	e := toAPIError(err)
	if e.Code == "not_member" || e.Code == "not_found" {
		return &apiError{status: http.StatusNotFound, Code: "not_found", Message: "no such session has the player as a member"}
	}
	return e
}

// detail is what err's first line says after sentinel's text ("" if
// nothing), as ": ..." .
func detail(err, sentinel error) string {
	line := firstLine(err.Error())
	i := strings.LastIndex(line, sentinel.Error())
	if i < 0 {
		return ""
	}
	if rest := strings.TrimPrefix(line[i+len(sentinel.Error()):], ": "); rest != "" {
		return ": " + rest
	}
	return ""
}

// codeOf is the code toAPIError gives err (a metric label).
func codeOf(err error) string { return toAPIError(err).Code }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// jsonContentType is every JSON answer's Content-Type, one slice for all:
// Header.Set allocates a new one per answer. net/http only reads a
// response's header values, so sharing it is safe as long as no handler
// appends to it (none does: they Set).
var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	}
	writeJSON(w, e.status, e)
}

// decode reads r's body, at most limit bytes, as exactly one JSON value
// into dst, refusing unknown fields. Nothing has been done when it fails.
func decode(w http.ResponseWriter, r *http.Request, limit int64, dst any) *apiError {
	// The server's own writer, not a wrapper (statusWriter): only it can
	// take MaxBytesReader's signal to close the connection after the 413
	// instead of reading the rest of an oversized body.
	for {
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			break
		}
		w = u.Unwrap()
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(dst)
	if err == nil {
		if dec.Decode(&struct{}{}) != io.EOF {
			return badRequest("bad_json", "the body holds more than one JSON value")
		}
		return nil
	}
	var (
		syn  *json.SyntaxError
		typ  *json.UnmarshalTypeError
		size *http.MaxBytesError
	)
	switch {
	case errors.As(err, &size):
		return &apiError{status: http.StatusRequestEntityTooLarge, Code: "body_too_large",
			Message: fmt.Sprintf("the body is over %d bytes, more than any valid request of this endpoint", size.Limit)}
	case errors.Is(err, io.EOF):
		return badRequest("bad_json", "empty body: want a JSON object")
	case errors.As(err, &syn), errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("bad_json", "malformed JSON: %v", err)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return badRequest("bad_json", "want a JSON object, got %s", typ.Value)
		}
		return badRequest("wrong_type", "field %s: want %s, got %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return badRequest("unknown_field", "%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return badRequest("bad_json", "%v", err)
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch k {
	case "int", "int64", "int32", "float64":
		return "number"
	case "slice":
		return "array"
	case "struct", "map":
		return "object"
	}
	return k
}

// The JSON shapes of the API, with the source document's names.

type sessionJSON struct {
	SessionNo   string          `json:"sessionNo"`
	DungeonCode string          `json:"dungeonCode"`
	LootCode    string          `json:"lootCode"`
	Quantity    int             `json:"quantity"`
	RuleVersion string          `json:"ruleVersion"`
	Status      loot.Status     `json:"status"`
	Deadline    time.Time       `json:"deadline"`
	OpenedAt    time.Time       `json:"openedAt"`
	Members     []loot.PlayerID `json:"members"`
	Fence       loot.Fence      `json:"fence"`
	Allocated   int             `json:"allocated"`
	Claims      *int            `json:"claims,omitempty"`
	Grants      []grantJSON     `json:"grants,omitempty"`
}

type grantJSON struct {
	GrantNo  string           `json:"grantNo"`
	PlayerID loot.PlayerID    `json:"playerId"`
	Rank     int              `json:"rank"`
	Status   loot.GrantStatus `json:"status"`
	Attempts int              `json:"attempts"`
}

func toSessionJSON(s loot.Session) sessionJSON {
	return sessionJSON{
		SessionNo: s.No, DungeonCode: s.Dungeon, LootCode: s.Loot, Quantity: s.Quantity,
		RuleVersion: string(s.Rule), Status: s.Status, Deadline: s.Deadline, OpenedAt: s.OpenedAt,
		Members: s.Members, Fence: s.Fence, Allocated: s.Allocated,
	}
}

func toGrantsJSON(gs []loot.Grant) []grantJSON {
	out := make([]grantJSON, len(gs))
	for i, g := range gs {
		out[i] = grantJSON{GrantNo: g.No, PlayerID: g.Player, Rank: g.Rank, Status: g.Status, Attempts: g.Attempts}
	}
	return out
}

type claimJSON struct {
	SessionNo  string        `json:"sessionNo"`
	PlayerID   loot.PlayerID `json:"playerId"`
	IntentType loot.Intent   `json:"intentType"`
	ClaimedAt  time.Time     `json:"claimedAt"`
}

type settleJSON struct {
	// Outcome is "settled" (this call recorded the result) or
	// "already_settled" (an earlier call did: the same result).
	Outcome string      `json:"outcome"`
	Session sessionJSON `json:"session"`
}

type auditJSON struct {
	// Replays says whether loot.Replay recomputed the recorded winners
	// from the snapshot alone and the grants on record are they.
	Replays  bool         `json:"replays"`
	Finding  string       `json:"finding,omitempty"`
	Diff     string       `json:"diff,omitempty"`
	Snapshot snapshotJSON `json:"snapshot"`
}

type snapshotJSON struct {
	SessionNo   string          `json:"sessionNo"`
	DungeonCode string          `json:"dungeonCode"`
	LootCode    string          `json:"lootCode"`
	Quantity    int             `json:"quantity"`
	Deadline    time.Time       `json:"deadline"`
	RuleVersion string          `json:"ruleVersion"`
	Fence       loot.Fence      `json:"fence"`
	Members     []loot.PlayerID `json:"members"`
	Claims      []candidateJSON `json:"claims"`
	ClaimsHash  string          `json:"claimsHash"`
	Winners     []loot.PlayerID `json:"winners"`
}

type candidateJSON struct {
	PlayerID   loot.PlayerID `json:"playerId"`
	IntentType loot.Intent   `json:"intentType"`
	ClaimedAt  time.Time     `json:"claimedAt"`
	Wins       int64         `json:"wins"`
}

func toSnapshotJSON(s loot.Snapshot) snapshotJSON {
	cs := make([]candidateJSON, len(s.Claims))
	for i, c := range s.Claims {
		cs[i] = candidateJSON{PlayerID: c.Player, IntentType: c.Intent, ClaimedAt: c.At, Wins: c.Fairness.Wins}
	}
	return snapshotJSON{
		SessionNo: s.Session, DungeonCode: s.Dungeon, LootCode: s.Loot, Quantity: s.Quantity,
		Deadline: s.Deadline, RuleVersion: string(s.Rule), Fence: s.Fence, Members: s.Members,
		Claims: cs, ClaimsHash: s.ClaimsHash, Winners: s.Winners,
	}
}
