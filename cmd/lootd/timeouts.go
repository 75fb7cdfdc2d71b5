package main

import "time"

// Connection timeouts.
const (
	// readHeaderTimeout bounds a request's headers (under 1 KiB: one or
	// two packets): two TCP retransmissions (1 s + 2 s: the initial RTO
	// of RFC 6298, doubled) plus a 300 ms mobile round trip, rounded up to 5 s.
	// A client slower than that holds a connection for nothing.
	readHeaderTimeout = 5 * time.Second
	// defaultPlayerIdle is how long a player's keep-alive connection may
	// wait idle for its next request (-idle-timeout). A player claims once
	// a drop; the request that follows soon on the same connection is a
	// retry after a 503: Retry-After 1 s after at most a 2 s claim.
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
