// Package redis backs ref.PendingStore and ref.Sink with Redis, so that
// several settler nodes share one durable claim per key. Every operation is
// one Lua script, so the existence check, the write and the pending set
// change together atomically; a claim survives a Redis crash only on a
// server that persists every write before answering, which Open checks.
// Store lists the keys and the deployments it supports; Open says what it
// requires of the server and how to use it.
package redis
