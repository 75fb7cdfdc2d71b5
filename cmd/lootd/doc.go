// Command lootd is the source document's loot allocation service (004,
// section 5.5) over ref/loot, as HTTP/JSON; run any number of instances on
// one store. `go run ./cmd/lootd -dev` needs no servers (it makes a token
// key and logs how to mint a token; add -player-header X-Player-Id for curl).
// `lootd -h` lists the flags (each also LOOTD_<NAME>, e.g. LOOTD_LOCK_TTL;
// the flag wins), `lootd token -player ID [-ttl D]` prints a token signed
// with the key, and `lootd version` (or -version) prints the build in one
// line. Players reach -listen (POST /api/loot/intent) and only the game's
// servers -internal; in `go doc -u`, config lists the operator's duties,
// server.internalHandler the endpoints and apiError the answers.
package main
