// Package loot is onceproof's loot allocation reference: a team's drop of N
// items goes to the top N claims exactly once, by a recorded rule, and the
// result can be replayed later. It follows its source document ("multi-player
// loot allocation: state machine, concurrent idempotency and audit"): sessions
// OPEN -> CLAIMING -> SETTLING -> CLOSED or CANCELED, NEED/GREED/PASS claims,
// a settle CAS, grants keyed session:player:loot, an audit snapshot. The Store
// is the one authority and judges every time by its own clock; Service lists
// the caller's duties and where it departs from the document. ref/loot/memory
// holds the in-process store; ref/loot/loottest is the suite every store must
// pass.
package loot
