package main

import (
	"context"
	"net/http"
	"time"
)

// Request budgets and connection timeouts. Each handler runs under its
// own deadline (its budget), and the server's WriteTimeout is that budget
// plus writeReserve: a store call that outlives the budget returns its
// context's error, which the handler answers as 503 outcome_unknown with
// Retry-After, and that answer still has writeReserve to reach the
// client. (A WriteTimeout shorter than the handler's work gives the
// client an empty reply while the write still runs.)
const (
	// claimBudget bounds every player request (a claim is one small
	// transaction: milliseconds on a healthy store). 2 s is 100 slow 20 ms
	// round trips, and a 503 at 2 s plus Retry-After 1 s gives a player at
	// least 5 tries within the shortest claim window the source document
	// uses (15 s).
	claimBudget = 2 * time.Second
	// opsBudget bounds every operations request but the settle: an open,
	// a start or a cancel is one transaction (an open's member rows are at
	// most maxMembers, one statement), a read is three queries. 5 s is above
	// the reads that carry their own bound (healthTimeout 2 s,
	// pendingTimeout 3 s), so those answer with their own error first.
	opsBudget = 5 * time.Second
	// writeReserve is the time left after a budget to send the answer.
	// pgx sets its connection's deadline the moment the context ends and
	// go-sql-driver closes its connection, so the store call returns
	// within microseconds; the answer (< 1 KiB) goes into the socket's
	// send buffer at once. 1 s is ten times the 100 ms a loaded machine
	// may take to schedule the handler's goroutine again.
	writeReserve = time.Second
	// readHeaderTimeout bounds a request's headers (under 1 KiB: one or
	// two packets): two TCP retransmissions (1 s + 2 s: the initial RTO
	// of RFC 6298, doubled) plus a 300 ms mobile round trip, rounded up to 5 s.
	// A client slower than that holds a connection for nothing.
	readHeaderTimeout = 5 * time.Second
	// defaultPlayerIdle is how long a player's keep-alive connection may
	// wait idle for its next request (-idle-timeout). A player claims once
	// a drop; the request that follows soon on the same connection is a
	// retry after a 503: Retry-After 1 s after at most claimBudget 2 s.
	// 5 s = 1 + 2 + 2 s slack keeps that retry on its connection; longer
	// holds a descriptor for a client that has gone. Behind a gateway that
	// pools connections to lootd, set it above the gateway's own idle
	// timeout so the gateway closes first.
	defaultPlayerIdle = 5 * time.Second
	// internalIdle is the operations listener's: above Go's
	// http.Transport default (90 s), so a game server's pool closes an
	// idle connection before lootd does and never sends a request on a
	// connection lootd is closing. Its cap keeps those descriptors in its
	// own share.
	internalIdle = 2 * time.Minute
)

// settlePath is the one operations endpoint whose budget is the lease.
const settlePath = "/api/loot/settle"

// internalBudget is an operations request's budget: a settle's is the
// lease (past it another node may take the session over and fence this
// settler's writes off, so work past it is wasted); every other
// request's is opsBudget.
func internalBudget(lease time.Duration) func(*http.Request) time.Duration {
	return func(r *http.Request) time.Duration {
		if r.URL.Path == settlePath {
			return lease
		}
		return opsBudget
	}
}

// withBudget runs h under a deadline of budget(r) from the moment the
// request's headers are read: the store calls it makes end then, and so
// does reading the body (a body that has not arrived by then is the
// client's failure, answered 400, not a reason to hold the handler past
// its budget). The answer may be written until writeReserve later.
func withBudget(h http.Handler, budget func(*http.Request) time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		end := time.Now().Add(budget(r))
		rc := http.NewResponseController(w)
		// Errors only where the writer cannot set deadlines (not
		// http.Server's HTTP/1 connections): the server's timeouts stand.
		_ = rc.SetReadDeadline(end)
		_ = rc.SetWriteDeadline(end.Add(writeReserve))
		ctx, cancel := context.WithDeadline(r.Context(), end)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}
