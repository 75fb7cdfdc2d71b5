// Package redis is loot.Lock on Redis with go-redis: the source document's
// settle lock, released safely (Acquire is SET NX PX, Release a
// compare-and-delete script). The lock is an optimisation: correctness rests
// on the store's CAS and fence (loot.Lock), so a Redis that loses a key lets
// a second settler only as far as the CAS, and Open asks for no
// persistence. Lock states the keys, the deployments it runs on and its
// timeouts; Open says how to use it.
package redis
