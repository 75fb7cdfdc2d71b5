package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
)

// mineJSON is what a player may read of a session: its state and their own
// claim and grant, never the other members' (the internal GET has those).
type mineJSON struct {
	SessionNo string        `json:"sessionNo"`
	PlayerID  loot.PlayerID `json:"playerId"`
	Status    loot.Status   `json:"status"`
	Deadline  time.Time     `json:"deadline"`
	// Claim is null until the player claims; Grant is null unless the
	// session settled with the player among its winners.
	Claim *claimJSON `json:"claim"`
	Grant *grantJSON `json:"grant"`
}

// mine is GET /api/loot/sessions/{sessionNo}/mine on the player listener:
// the authenticated caller's own claim and grant. A session the caller is
// not a member of is 404, as for a claim (toPlayerError). Like read, three
// committed reads, not one snapshot: a grant delivered between them shows
// its newer status.
func (s *server) mine(w http.ResponseWriter, r *http.Request) {
	who, err := s.auth.caller(r)
	if err != nil {
		writeError(w, &apiError{status: http.StatusUnauthorized, Code: "unauthenticated", Message: err.Error()})
		return
	}
	no := r.PathValue("sessionNo")
	out, err := s.readMine(r.Context(), no, who.Player)
	if err != nil {
		s.failAs(w, toPlayerError, err, "player read failed", "session", no, "player", who.Player)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *server) readMine(ctx context.Context, no string, p loot.PlayerID) (mineJSON, error) {
	if err := loot.CheckSessionNo(no); err != nil {
		return mineJSON{}, err
	}
	sess, err := s.be.store.Session(ctx, no)
	if err != nil {
		return mineJSON{}, err
	}
	if !sess.IsMember(p) {
		return mineJSON{}, fmt.Errorf("session %q, player %d: %w", no, p, loot.ErrNotMember)
	}
	out := mineJSON{SessionNo: sess.No, PlayerID: p, Status: sess.Status, Deadline: sess.Deadline}
	cs, err := s.be.store.Claims(ctx, no)
	if err != nil {
		return mineJSON{}, err
	}
	for _, c := range cs {
		if c.Player == p {
			out.Claim = &claimJSON{SessionNo: c.Session, PlayerID: c.Player, IntentType: c.Intent, ClaimedAt: c.At}
		}
	}
	gs, err := s.be.store.Grants(ctx, no)
	if err != nil {
		return mineJSON{}, err
	}
	for _, g := range toGrantsJSON(gs) {
		if g.PlayerID == p {
			out.Grant = &g
		}
	}
	return out, nil
}
