package loot

import "context"

// CheckContext refuses a nil ctx with ErrBadArgument. Stores call it
// before touching their pool: database/sql dereferences a nil context
// while it holds the pool's lock, and the panic leaves the lock held, so
// one caller's mistake (recovered or not) hangs every later call.
func CheckContext(ctx context.Context) error {
	if ctx == nil {
		return badArg("nil context")
	}
	return nil
}
