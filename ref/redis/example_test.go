package redis_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/redis"
)

// A settler node on a shared Redis (Open refuses it unless it runs with
// appendonly yes and appendfsync always: a crash of Redis could otherwise
// forget claims). The Sink's
// effect is an entry in the ledger list, applied once per key together with
// its grant key and the claim's Delivered state. (Not run by go test: it
// needs a server.)
func Example() {
	ctx := context.Background()
	st, err := redis.Open(ctx, "redis://cache.internal:6379/0", redis.Options{Prefix: "game:", Batch: true})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	settler := ref.NewSettler(ref.NewWindow(10*time.Minute, 64), st, ref.WithSink(st.Sink()))
	if _, err := settler.Recover(ctx, time.Now()); err != nil {
		log.Print(err)
	}
	key := ref.KeyOf(0x0103, 42, 7, 3)
	res, err := settler.Apply(ctx, key, []byte("42 100"), time.Now())
	if err != nil {
		log.Print(err) // not acked: the sender retries
		return
	}
	fmt.Println(res.State, res.Fresh)
}
