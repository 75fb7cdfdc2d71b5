package postgres_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/postgres"
)

// A settler node on a shared PostgreSQL: the claim, the credit and the
// grant key live in one database, and the credit commits in the same
// transaction as its grant key. Run as many nodes as you like on the same
// URL; each keeps its own Window. (Not run by go test: it needs a server.)
func Example() {
	ctx := context.Background()
	st, err := postgres.Open(ctx, "postgres://app@db.internal/game", postgres.Options{Batch: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	credit := func(ctx context.Context, tx pgx.Tx, key ref.Key, payload []byte) error {
		// payload is whatever the caller passed to Apply: here "player amount".
		var player, amount int64
		if _, err := fmt.Sscan(string(payload), &player, &amount); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE wallet SET coins = coins + $2 WHERE player = $1`, player, amount)
		return err
	}
	settler := ref.NewSettler(ref.NewWindow(10*time.Minute, 64), st, ref.WithSink(st.Sink(credit)))

	// On start, and then periodically: complete grants a dead node left.
	if _, err := settler.Recover(ctx, time.Now()); err != nil {
		log.Print(err)
	}
	key := ref.KeyOf(0x0103, 42 /* player */, 7 /* room */, 3 /* round */)
	res, err := settler.Apply(ctx, key, []byte("42 100"), time.Now())
	if err != nil {
		log.Print(err) // not acked: the sender retries
		return
	}
	fmt.Println(res.State, res.Fresh)
}
