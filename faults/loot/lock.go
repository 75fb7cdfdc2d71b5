package lootfaults

import "time"

// LockService is the lock service (Redis) the world runs every lock call
// of a run on. The world's own is a model in memory; a Cluster that brings
// a real one (LockCluster) has the world run the calls on it instead. The
// world keeps what makes a run a run either way: each call is one fault
// point and one event, and its time is the lock service's clock (now:
// virtual time since engine.Epoch, plus Truth.LockSkew), which a real
// service must honour in place of its own.
//
// The contract is Env's: SetNX sets key to token until now+ttl if the key
// is absent or its ttl ended (now >= its until), in one step; Get returns
// the key's token, "" if absent or ended; Del deletes the key and reports
// whether it was there and its ttl had not ended (Redis's DEL counts no
// expired key); Unlock deletes the key only if it holds token and its ttl
// has not ended. An error is the service's own failure: the world hands it
// to the design as the call's error.
type LockService interface {
	SetNX(now time.Duration, key, token string, ttl time.Duration) (bool, error)
	Get(now time.Duration, key string) (string, error)
	Del(now time.Duration, key string) (bool, error)
	Unlock(now time.Duration, key, token string) (bool, error)
}

// LockCluster is a Cluster that may bring the lock service its run uses
// (a real Redis, fresh per run). Run asks for it once, after NewCluster;
// nil is the world's own.
type LockCluster interface {
	Cluster
	LockService() LockService
}

// NewLockModel returns the world's own lock service, in memory: what a real
// one is checked against (the same calls must get the same answers).
func NewLockModel() LockService { return memLocks{} }

// memLocks is the world's lock service: each key's holder and the end of
// its ttl. An ended key stays until it is set over or deleted, and answers
// every call as an absent one, as in Redis.
type memLocks map[string]lease

type lease struct {
	token string
	until time.Duration // by the lock service's clock
}

func (m memLocks) SetNX(now time.Duration, key, token string, ttl time.Duration) (bool, error) {
	if l, held := m[key]; held && now < l.until {
		return false, nil
	}
	m[key] = lease{token: token, until: now + ttl}
	return true, nil
}

func (m memLocks) Get(now time.Duration, key string) (string, error) {
	if l, held := m[key]; held && now < l.until {
		return l.token, nil
	}
	return "", nil
}

func (m memLocks) Del(now time.Duration, key string) (bool, error) {
	l, held := m[key]
	delete(m, key)
	return held && now < l.until, nil
}

func (m memLocks) Unlock(now time.Duration, key, token string) (bool, error) {
	if l, held := m[key]; held && now < l.until && l.token == token {
		delete(m, key)
		return true, nil
	}
	return false, nil
}
