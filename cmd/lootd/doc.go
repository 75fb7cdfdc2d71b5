// Command lootd is the source document's loot allocation service (004,
// section 5.5) over ref/loot, as HTTP/JSON; run any number of instances on
// one store. `go run ./cmd/lootd -dev` needs no servers (it makes a token
// key and logs how to mint a token; add -player-header X-Player-Id for curl).
//
// Flags (each also LOOTD_<NAME>, e.g. LOOTD_LOCK_TTL; the flag wins):
//
//	-listen ADDR            players: POST /api/loot/intent only
//	-internal ADDR          operations; never reachable by players
//	-db URL | -dev          postgres://..., mysql://u:p@host:3306/db or u:p@tcp(host)/db; -dev: memory
//	-redis URL              settle lock (optional: the store's CAS decides); -redis-prefix P
//	-lock-ttl D             settle lease: lock ttl, takeover of a dead settler
//	-settle-every D         settle sessions past their deadline
//	-compensate-every D     Recover: deliver PENDING grants whose lease ended
//	-player-header H        trust header H as the player id: ONLY behind a gateway that strips it
//	-token-key-file F       HMAC key of "Authorization: Bearer v1.<player>.<expires>.<mac>" tokens
//	-max-conns N            players' open connections (default: what RLIMIT_NOFILE leaves
//	                        after the pools, a reserve and -max-internal-conns); more get 503
//	-max-internal-conns N   operations' open connections, apart from the players' (256)
//	-idle-timeout D         a player's keep-alive idle (5s; behind a pooling gateway, above its own)
//	-db-conns N, -drain D, -log-level L
//
// `lootd token -player ID [-ttl D]` prints a token signed with the key.
// `lootd version` (or -version) prints one line: the module version, the
// Go version, and vcs.revision, vcs.time and vcs.modified when the go
// command stamped them.
// Internal endpoints: POST /api/loot/sessions (open: sessionNo,
// dungeonCode, lootCode, quantity, members, claimWindowSeconds; the
// deadline is the store's clock at the open plus the window, 1..86400 s;
// the ranges of the rest are loot.Spec's, the same on every store), POST
// /api/loot/sessions/{no}/start, POST /api/loot/settle and
// /api/loot/cancel ({"sessionNo"}), GET /api/loot/sessions/{no} and
// /api/loot/sessions/{no}/audit, GET /metrics, GET /healthz (the store),
// GET /readyz (the store, and "lock": "ok", "degraded" or "none"). The player
// claims with {"sessionNo","intentType"}: a body with playerId is 400.
// Errors are {"code","message"}: 400 bad input, 401, 404 (to a player, a
// session they are not a member of is 404 too), 409 for
// the session's state, 413, 503 outcome_unknown with Retry-After (repeat
// the request: every endpoint is idempotent), also the answer to a
// request the store has not finished within its budget: 2s for a claim,
// 5s for other operations, -lock-ttl for a settle. A repeated open,
// start or cancel is 200; a settle of a settled session is 200
// "already_settled". A connection over a listener's cap is answered 503
// too_many_connections and closed.
//
// The operator's duties:
//
//  1. Expose -listen to players and -internal only to the game's servers.
//  2. Authenticate players: tokens, or -player-header behind a gateway that
//     strips that header from every client request.
//  3. Give the database account SELECT, INSERT and UPDATE (see ref/loot).
//     Items go to the store's loot_inventory table, which the game reads;
//     sessions rank by rule v1, a player's wins counted in that table.
//  4. Pick -lock-ttl above the slowest settle; stop with SIGTERM (in-flight
//     requests drain); alert on lootd_grants_pending, settle outcomes and
//     lootd_lock_degraded (a lock call failed, or timed out after
//     loot.DefaultLockTimeout(-lock-ttl), 300ms at the default: settles
//     go on through the store's CAS).
package main
