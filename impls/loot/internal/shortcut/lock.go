package shortcut

import (
	"context"
	"time"

	lootfaults "github.com/onceproof/onceproof/faults/loot"
)

// getThenDel is source 004's release, the lock of NonatomicUnlock: read
// the token, delete if it is ours; another settler can take the key
// between the two.
type getThenDel struct{ env lootfaults.Env }

func (l getThenDel) Acquire(_ context.Context, key, token string, ttl time.Duration) (bool, error) {
	return l.env.SetNX(key, token, ttl)
}

func (l getThenDel) Release(_ context.Context, key, token string) (bool, error) {
	cur, err := l.env.Get(key)
	if err != nil || cur != token {
		return false, err
	}
	return true, l.env.Del(key)
}
