package loot

import (
	"context"
	"time"
)

// checkedStore is the Store as the Service calls it: every session number
// passes CheckSessionNo before the store sees it. Unchecked, a number no
// store can hold is answered differently by each: PostgreSQL refuses a NUL
// or invalid UTF-8 with a data error (outcome unknown to the Service, so
// "retry" to a client), MariaDB and memory look it up and say not found.
// Checked here, it is ErrBadArgument on every store, and every entry point
// (Settle and Recover included, and any added later) is covered by this
// one wrapper. Open needs no check here: the Service normalizes its spec.
type checkedStore struct{ Store }

// checked calls call if no is a valid session number.
func checked[T any](no string, call func() (T, error)) (T, error) {
	if err := CheckSessionNo(no); err != nil {
		var zero T
		return zero, err
	}
	return call()
}

func (c checkedStore) Session(ctx context.Context, no string) (Session, error) {
	return checked(no, func() (Session, error) { return c.Store.Session(ctx, no) })
}

func (c checkedStore) Claims(ctx context.Context, no string) ([]Claim, error) {
	return checked(no, func() ([]Claim, error) { return c.Store.Claims(ctx, no) })
}

func (c checkedStore) Grants(ctx context.Context, no string) ([]Grant, error) {
	return checked(no, func() ([]Grant, error) { return c.Store.Grants(ctx, no) })
}

func (c checkedStore) Snapshot(ctx context.Context, no string) (Snapshot, error) {
	return checked(no, func() (Snapshot, error) { return c.Store.Snapshot(ctx, no) })
}

func (c checkedStore) StartClaiming(ctx context.Context, no string) (Session, error) {
	return checked(no, func() (Session, error) { return c.Store.StartClaiming(ctx, no) })
}

func (c checkedStore) Cancel(ctx context.Context, no string) (Session, error) {
	return checked(no, func() (Session, error) { return c.Store.Cancel(ctx, no) })
}

func (c checkedStore) BeginSettle(ctx context.Context, no string, lease time.Duration) (Frozen, error) {
	return checked(no, func() (Frozen, error) { return c.Store.BeginSettle(ctx, no, lease) })
}

func (c checkedStore) Claim(ctx context.Context, no string, p PlayerID, in Intent) (Claim, bool, error) {
	if err := CheckSessionNo(no); err != nil {
		return Claim{}, false, err
	}
	return c.Store.Claim(ctx, no, p, in)
}
