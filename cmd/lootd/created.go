package main

import (
	"context"

	"github.com/onceproof/onceproof/ref/loot"
)

// createdStore is the Store under the server's Service: it tells a
// handler whether its Open or Claim wrote a new row (the store's created)
// or found one, which the Service's Open and Claim do not return. The
// handler asks by putting a *bool in the request's context (withCreated);
// a call without one (the loops', the compensator's) is passed through.
// The answer is the store's own, from the one statement that wrote or
// found the row, so a concurrent repeat cannot make both calls "created".
type createdStore struct{ loot.Store }

type createdKey struct{}

// withCreated is ctx with a slot the store's Open or Claim fills.
func withCreated(ctx context.Context) (context.Context, *bool) {
	created := new(bool)
	return context.WithValue(ctx, createdKey{}, created), created
}

func record(ctx context.Context, created bool) {
	if p, ok := ctx.Value(createdKey{}).(*bool); ok {
		*p = created
	}
}

func (s createdStore) Open(ctx context.Context, spec loot.Spec) (loot.Session, bool, error) {
	sess, created, err := s.Store.Open(ctx, spec)
	record(ctx, created && err == nil)
	return sess, created, err
}

func (s createdStore) Claim(ctx context.Context, no string, p loot.PlayerID, in loot.Intent) (loot.Claim, bool, error) {
	c, created, err := s.Store.Claim(ctx, no, p, in)
	record(ctx, created && err == nil)
	return c, created, err
}
