package faults

import "strings"

// readPrefix marks a durable op as a read (see Read).
const readPrefix = "read:"

// Read names a durable op whose fn only reads the Cluster:
// env.Durable(faults.Read("seen"), fn). The runner cannot see inside fn,
// so every other Durable call (and every Credit) that ran could have taken
// effect, and from then on the design holds the settlement (History.Reached);
// a read that ran changed nothing, so it starts no custody. Faults fire at
// a read as at any Env call. Naming a write a read hides a loss from NoLoss
// (a false negative, never a false positive): say it only of a read.
func Read(op string) string { return readPrefix + op }

// isRead reports whether op was named by Read.
func isRead(op string) bool { return strings.HasPrefix(op, readPrefix) }
