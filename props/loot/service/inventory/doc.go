// Package inventory is the inventory service that service mode hosts for
// the service under test: it records every delivery it receives, applies
// each grant at most once, and fails, times out or loses its reply when
// its fault plan says so. What it recorded (Deliveries, WriteJSON) is
// the ground truth the judge reads: which grants reached the inventory,
// under which key, how many times.
//
// # Protocol
//
// This is the contract an inventory service must keep to be delivered to
// over HTTP (lootd -inventory URL speaks it; so may a user's own
// inventory):
//
//  1. A delivery is POST <URL> (this server's path is Path) with the
//     header Idempotency-Key: <grant number> and a JSON body
//     {"grantNo", "sessionNo", "playerId", "lootCode", "quantity"}
//     (grantNo equal to the key; sessionNo and lootCode not empty;
//     playerId a number > 0; quantity >= 1; the grant number is the
//     source document's sessionNo:playerId:lootCode).
//  2. The inventory applies the item at most once per key, durably,
//     before it answers 200: {"result": "applied", "grantNo": <key>} the
//     first time, {"result": "already", "grantNo": <key>} for a key
//     already applied with the same body. A client takes 200 as "the item
//     is in the inventory", so 200 must never be written before that is
//     true.
//  3. 400: the request is malformed (no key, a body that does not parse
//     or breaks rule 1); 422: the key was applied with another body.
//     Nothing is applied, and the same request would be refused again:
//     a client does not retry it at once (lootd's compensation tries it
//     again after the grant's lease, so a fixed inventory still gets it).
//  4. Any other answer, or none (a 5xx, a timeout, a closed connection),
//     means the outcome is unknown: the item may or may not have been
//     applied. The client delivers again with the same key, and rule 2
//     makes that safe.
//
// # Faults
//
// A Plan gives each delivery a Fault: Fail answers 503 and applies
// nothing; TimeoutAfterApply applies, then holds its reply past the
// client's timeout (Options.Hold); LoseReply applies, then closes the
// connection without a reply. The last two are the at-least-once
// transport's hard case: the effect happened and the client cannot know.
package inventory
