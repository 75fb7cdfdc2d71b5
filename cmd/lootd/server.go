package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// server holds what the handlers and the loops share.
type server struct {
	svc *loot.Service
	// compensator is svc on a view of the store that lists no overdue
	// session: its Recover only delivers PENDING grants. Overdue sessions
	// are the settle loop's, which settles them through settle (counted
	// and timed) instead of inside Recover, where no outcome shows.
	compensator *loot.Service
	be          *backend
	auth        *authenticator
	m           *metrics
	log         *slog.Logger
	openapi     func() []byte // GET /openapi.json's body (encodeOpenAPI of routes)
}

// newServer builds the Service on be, with the lock and inventory counted.
func newServer(be *backend, auth *authenticator, lease time.Duration, log *slog.Logger) (*server, error) {
	m := newMetrics(be.pending, log)
	cfg := loot.Config{
		Store:       createdStore{be.store},
		Inventory:   countedInventory{Inventory: be.inventory, m: m, log: log},
		Fairness:    be.fairness,
		SettleLease: lease,
	}
	if be.lock != nil {
		cfg.Lock = countedLock{Lock: be.lock, m: m}
	}
	svc, err := loot.New(cfg)
	if err != nil {
		return nil, err
	}
	cfg.Store = noOverdue{be.store}
	comp, err := loot.New(cfg)
	if err != nil {
		return nil, err
	}
	return &server{svc: svc, compensator: comp, be: be, auth: auth, m: m, log: log,
		openapi: sync.OnceValue(func() []byte { return encodeOpenAPI(routes) })}, nil
}

// noOverdue is a store whose Overdue lists nothing (see
// server.compensator).
type noOverdue struct{ loot.Store }

func (noOverdue) Overdue(context.Context, int) ([]string, error) { return nil, nil }

type intentRequest struct {
	SessionNo  string `json:"sessionNo"`
	IntentType string `json:"intentType"`
	// PlayerID and FairScore are the source document's body fields that a
	// client must not control; they are declared only to refuse them
	// with a reason (any other unknown field is refused as unknown).
	PlayerID  json.RawMessage `json:"playerId"`
	FairScore json.RawMessage `json:"fairScore"`
}

// intent is POST /api/loot/intent: the authenticated caller claims. The
// answer is 200 {"accepted": true, "created": ...}: created is true for
// the request that recorded the player's first claim in the session, false
// for a repeat (the recorded claim, claimedAt unchanged) and for a change
// of intent (the new intent, claimedAt now).
func (s *server) intent(w http.ResponseWriter, r *http.Request) {
	who, err := s.auth.caller(r)
	if err != nil {
		s.m.claims.WithLabelValues("unauthenticated").Inc()
		writeError(w, &apiError{status: http.StatusUnauthorized, Code: "unauthenticated", Message: err.Error()})
		return
	}
	var req intentRequest
	e := decode(w, r, smallBody, &req)
	switch {
	case e != nil:
	case req.PlayerID != nil:
		e = badRequest("player_in_body", "playerId is not accepted in the body: the player is the authenticated caller (%d)", who.Player)
	case req.FairScore != nil:
		e = badRequest("fair_score_in_body", "fairScore is not accepted: fairness is read from the server's history when the session settles")
	case req.SessionNo == "":
		e = badRequest("missing_field", "sessionNo is required")
	case !loot.Intent(req.IntentType).Valid():
		e = badRequest("bad_intent", "intentType %q: want NEED, GREED or PASS", req.IntentType)
	}
	if e != nil {
		s.m.claims.WithLabelValues(e.Code).Inc()
		writeError(w, e)
		return
	}
	ctx, created := withCreated(r.Context())
	c, err := s.svc.Claim(ctx, who, loot.ClaimRequest{Session: req.SessionNo, Intent: loot.Intent(req.IntentType)})
	if err != nil {
		s.failAs(w, toPlayerError, err, "claim refused", "session", req.SessionNo, "player", who.Player, "intent", req.IntentType)
		s.m.claims.WithLabelValues(codeOf(err)).Inc() // not_member still counted apart
		return
	}
	s.m.claims.WithLabelValues("accepted").Inc()
	// Enabled first: the arguments' boxing costs two allocations a claim
	// even when Debug is off (BenchmarkLootHandler), and a claim is the
	// hottest request.
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.Debug("claim accepted", "session", c.Session, "player", c.Player, "intent", c.Intent)
	}
	// 200 either way: a player's client that retries on a lost answer
	// treats both as "my claim stands"; created tells them apart.
	writeJSON(w, http.StatusOK, claimAnswerJSON{true, *created, claimJSON{SessionNo: c.Session, PlayerID: c.Player, IntentType: c.Intent, ClaimedAt: c.At}})
}

// claimAnswerJSON is a claim's answer: the claim as recorded, and whether
// this request created it.
type claimAnswerJSON struct {
	Accepted bool `json:"accepted"`
	Created  bool `json:"created"`
	claimJSON
}

// fail writes err's API error and logs it (with the cause, which the
// client does not see for a 503) at a level by its status.
func (s *server) fail(w http.ResponseWriter, err error, msg string, attrs ...any) *apiError {
	return s.failAs(w, toAPIError, err, msg, attrs...)
}

// failAs is fail with the mapping to the client's answer given (the player
// listener's is toPlayerError).
func (s *server) failAs(w http.ResponseWriter, answer func(error) *apiError, err error, msg string, attrs ...any) *apiError {
	e := answer(err)
	level := slog.LevelInfo
	if e.status >= 500 {
		level = slog.LevelWarn
	}
	s.log.Log(context.Background(), level, msg, append(attrs, "code", e.Code, "err", err)...)
	writeError(w, e)
	return e
}

type openRequest struct {
	SessionNo          string  `json:"sessionNo"`
	DungeonCode        string  `json:"dungeonCode"`
	LootCode           string  `json:"lootCode"`
	Quantity           int     `json:"quantity"`
	Members            []int64 `json:"members"`
	ClaimWindowSeconds int     `json:"claimWindowSeconds"`
}

// open is POST /api/loot/sessions. The deadline is the store's clock at
// the open plus claimWindowSeconds, so the window is measured by the
// clock that judges it, whatever this node's clock says. A repeat of an
// open (same definition, the deadline aside: the repeat's now differs) is
// answered with the recorded session, 200; the open that created it is
// 201.
func (s *server) open(w http.ResponseWriter, r *http.Request) {
	var req openRequest
	if e := decode(w, r, openBody, &req); e != nil {
		writeError(w, e)
		return
	}
	// The range is checked in seconds, before the multiplication: a
	// Duration holds 2^63 ns, about 292 years, and a larger count of
	// seconds wraps around (2^55+1 s became 1 s).
	switch maxSeconds := int(maxClaimWindow / time.Second); {
	case req.ClaimWindowSeconds < 1 || req.ClaimWindowSeconds > maxSeconds:
		writeError(w, badRequest("bad_argument", "claimWindowSeconds %d: want 1..%d", req.ClaimWindowSeconds, maxSeconds))
		return
	case len(req.Members) > maxMembers:
		writeError(w, badRequest("bad_argument", "%d members: want at most %d", len(req.Members), maxMembers))
		return
	}
	now, err := s.be.now(r.Context())
	if err != nil {
		s.fail(w, err, "open: reading the store's clock", "session", req.SessionNo)
		return
	}
	spec := loot.Spec{
		No: req.SessionNo, Dungeon: req.DungeonCode, Loot: req.LootCode, Quantity: req.Quantity,
		Deadline: now.Add(time.Duration(req.ClaimWindowSeconds) * time.Second), Rule: loot.RuleCount, Members: make([]loot.PlayerID, len(req.Members)),
	}
	for i, m := range req.Members {
		spec.Members[i] = loot.PlayerID(m)
	}
	ctx, created := withCreated(r.Context())
	sess, err := s.svc.Open(ctx, spec)
	if errors.Is(err, loot.ErrConflict) && sameButDeadline(sess, spec) {
		err = nil
	}
	if err != nil {
		s.fail(w, err, "open refused", "session", req.SessionNo)
		return
	}
	s.log.Info("session open", "session", sess.No, "dungeon", sess.Dungeon, "loot", sess.Loot,
		"quantity", sess.Quantity, "members", len(sess.Members), "deadline", sess.Deadline, "created", *created)
	status := http.StatusOK
	if *created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toSessionJSON(sess))
}

// sameButDeadline reports whether the recorded session is spec but for
// the deadline.
func sameButDeadline(rec loot.Session, spec loot.Spec) bool {
	n, err := spec.Normalize()
	if err != nil {
		return false
	}
	n.Deadline = rec.Deadline
	return rec.Same(n)
}

// start is POST /api/loot/sessions/{sessionNo}/start (OPEN -> CLAIMING; a
// repeat is 200).
func (s *server) start(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("sessionNo")
	sess, err := s.svc.StartClaiming(r.Context(), no)
	if err != nil {
		s.fail(w, err, "start refused", "session", no)
		return
	}
	s.log.Info("claiming started", "session", no, "deadline", sess.Deadline)
	writeJSON(w, http.StatusOK, toSessionJSON(sess))
}

type sessionRequest struct {
	SessionNo string `json:"sessionNo"`
}

// sessionNo decodes a body that names a session.
func sessionNo(w http.ResponseWriter, r *http.Request) (string, *apiError) {
	var req sessionRequest
	if e := decode(w, r, smallBody, &req); e != nil {
		return "", e
	}
	if req.SessionNo == "" {
		return "", badRequest("missing_field", "sessionNo is required")
	}
	return req.SessionNo, nil
}

// settleHandler is POST /api/loot/settle. "settled": this call recorded
// the result; "already_settled" (200 too): an earlier one did, and this is
// its result. A session another settler holds is 409 already_settling.
func (s *server) settleHandler(w http.ResponseWriter, r *http.Request) {
	no, e := sessionNo(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	st, err := s.settle(r.Context(), no, "api")
	if err == nil || st.Session.Status == loot.StatusClosed {
		// The Settlement holds the result: no read back.
		sess := toSessionJSON(st.Session)
		sess.Grants = toGrantsJSON(st.Grants)
		writeJSON(w, http.StatusOK, settleJSON{Outcome: "settled", Session: sess})
		return
	}
	if !errors.Is(err, loot.ErrAlreadySettled) {
		writeError(w, toAPIError(err))
		return
	}
	sess, err := s.read(r.Context(), no)
	if err != nil {
		s.fail(w, err, "settle: reading the recorded result", "session", no)
		return
	}
	writeJSON(w, http.StatusOK, settleJSON{Outcome: "already_settled", Session: sess})
}

// settle runs one Settle and records its outcome in the metrics and the
// log; trigger says who asked (api, deadline).
func (s *server) settle(ctx context.Context, no, trigger string) (loot.Settlement, error) {
	begin := time.Now()
	st, err := s.svc.Settle(ctx, no)
	if err != nil && st.Session.Status != loot.StatusClosed {
		code := codeOf(err)
		s.m.settles.WithLabelValues(trigger, code).Inc()
		level := slog.LevelDebug // someone else has it, or it is not due: nothing to see
		switch code {
		case "outcome_unknown", "taken_over":
			level = slog.LevelWarn
		case "canceled", "not_found", "bad_argument":
			level = slog.LevelInfo
		}
		s.log.Log(ctx, level, "settle refused", "session", no, "trigger", trigger, "code", code, "err", err)
		return st, err
	}
	s.m.settles.WithLabelValues(trigger, "settled").Inc()
	s.m.settleSeconds.WithLabelValues(trigger).Observe(time.Since(begin).Seconds())
	winners := make([]loot.PlayerID, len(st.Grants))
	grants := make([]string, len(st.Grants))
	for i, g := range st.Grants {
		winners[i], grants[i] = g.Player, g.No
	}
	s.log.Info("settled", "session", no, "trigger", trigger, "fence", st.Session.Fence,
		"winners", winners, "grants", grants, "delivered", st.Delivered)
	if err != nil {
		s.log.Warn("settled; some deliveries unknown, compensation retries them", "session", no, "err", err)
	}
	return st, err
}

// cancel is POST /api/loot/cancel (a repeat is 200; a CLOSED session is
// 409 already_settled: its grants stand).
func (s *server) cancel(w http.ResponseWriter, r *http.Request) {
	no, e := sessionNo(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	sess, err := s.svc.Cancel(r.Context(), no)
	if err != nil {
		s.fail(w, err, "cancel refused", "session", no)
		return
	}
	s.log.Info("session canceled", "session", no)
	writeJSON(w, http.StatusOK, toSessionJSON(sess))
}

// read is a session with its claim count and grants: three reads, each a
// committed state (not one snapshot: a claim or a delivery may land
// between them).
func (s *server) read(ctx context.Context, no string) (sessionJSON, error) {
	// The Service checks the numbers it is given; these reads go to the
	// store directly, so they check it themselves (a path id can hold any
	// byte: %00, %FF).
	if err := loot.CheckSessionNo(no); err != nil {
		return sessionJSON{}, err
	}
	sess, err := s.be.store.Session(ctx, no)
	if err != nil {
		return sessionJSON{}, err
	}
	cs, err := s.be.store.Claims(ctx, no)
	if err != nil {
		return sessionJSON{}, err
	}
	gs, err := s.be.store.Grants(ctx, no)
	if err != nil {
		return sessionJSON{}, err
	}
	out := toSessionJSON(sess)
	n := len(cs)
	out.Claims, out.Grants = &n, toGrantsJSON(gs)
	return out, nil
}

// session is GET /api/loot/sessions/{sessionNo}.
func (s *server) session(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("sessionNo")
	out, err := s.read(r.Context(), no)
	if err != nil {
		s.fail(w, err, "session read failed", "session", no)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// audit is GET /api/loot/sessions/{sessionNo}/audit: the snapshot, and
// whether it replays (200 either way: the finding is the answer).
func (s *server) audit(w http.ResponseWriter, r *http.Request) {
	no := r.PathValue("sessionNo")
	snap, err := s.svc.Audit(r.Context(), no)
	out := auditJSON{Replays: err == nil, Snapshot: toSnapshotJSON(snap)}
	if re, ok := errors.AsType[*loot.ReplayError](err); ok {
		s.log.Error("audit: the snapshot does not replay", "session", no, "finding", re.What, "diff", re.Diff)
		out.Finding, out.Diff = re.What, re.Diff
	} else if err != nil {
		s.fail(w, err, "audit failed", "session", no)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// healthTimeout bounds /healthz's store ping: a load balancer's check
// times out in a few seconds.
const healthTimeout = 2 * time.Second

// healthJSON is /healthz's and /readyz's answer: status "ok", the
// store's kind (memory, postgres, mysql), and (/readyz only) the lock's
// state: "ok", "degraded" or "none".
type healthJSON struct {
	Status string `json:"status"`
	Store  string `json:"store"`
	Lock   string `json:"lock,omitempty"`
}

// healthz is 200 while the store answers, else 503.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if !s.storeAnswers(ctx, w, "healthz") {
		return
	}
	writeJSON(w, http.StatusOK, healthJSON{Status: "ok", Store: s.be.kind})
}

// storeAnswers pings the store; if it does not answer it writes the 503
// and logs why (for the probe named what).
func (s *server) storeAnswers(ctx context.Context, w http.ResponseWriter, what string) bool {
	if err := s.be.ping(ctx); err != nil {
		s.log.Warn(what+": store ping failed", "err", err)
		writeError(w, &apiError{status: http.StatusServiceUnavailable, Code: "store_unreachable", Message: "the store does not answer"})
		return false
	}
	return true
}

// readyz is /healthz with the settle lock's state: 200 {"status": "ok",
// "store": ..., "lock": "ok" | "degraded" | "none"} while the store
// answers, else 503 as /healthz. A lock service that offers a probe (the
// Redis lock's Ping) is probed, bounded like a settle's lock call, and the
// result counts as a lock call (lockState); -dev's in-process lock is
// reported as its last call found it.
//
// A degraded lock is 200, not 503: the lock is an optimisation, and with
// it down this instance still settles correctly (the store's CAS decides),
// each settle slowed by at most two lock timeouts. Every instance shares
// the one lock service, so a 503 would take all of them out of rotation
// at once and turn a slowdown into an outage; alert on
// lootd_lock_degraded instead.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	if !s.storeAnswers(ctx, w, "readyz") {
		return
	}
	lock := "none"
	if s.be.lock != nil {
		if p, ok := s.be.lock.(interface{ Ping(context.Context) error }); ok {
			pctx, cancel := context.WithTimeout(ctx, s.svc.LockTimeout())
			began := s.m.lock.begin()
			s.m.lock.end(pctx, began, "ping", p.Ping(pctx))
			cancel()
		}
		lock = s.m.lock.status()
	}
	writeJSON(w, http.StatusOK, healthJSON{Status: "ok", Store: s.be.kind, Lock: lock})
}
