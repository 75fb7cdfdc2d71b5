package sqlite_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/onceproof/onceproof/ref"
	"github.com/onceproof/onceproof/ref/sqlite"
)

// A game server settles match rewards exactly once: the store, the ledger
// and the player balances live in one SQLite file, and the credit commits in
// the same transaction as its grant key and the record's Delivered state.
func Example() {
	dir, err := os.MkdirTemp("", "onceproof-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := sqlite.Open(filepath.Join(dir, "settle.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	if _, err := store.DB().Exec(`CREATE TABLE IF NOT EXISTS balances (player INTEGER PRIMARY KEY, coins INTEGER NOT NULL)`); err != nil {
		log.Fatal(err)
	}
	// The payload says who gets what: player (8 bytes) then coins (8 bytes).
	credit := func(ctx context.Context, tx *sql.Tx, key ref.Key, payload []byte) error {
		player, coins := binary.BigEndian.Uint64(payload), binary.BigEndian.Uint64(payload[8:])
		_, err := tx.ExecContext(ctx, `INSERT INTO balances (player, coins) VALUES (?, ?)
			ON CONFLICT (player) DO UPDATE SET coins = coins + excluded.coins`, int64(player), int64(coins))
		return err
	}
	settler := ref.NewSettler(ref.NewWindow(time.Minute, 16), store, ref.WithSink(store.Sink(credit)))

	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	// On start, complete what a crashed process left Granted.
	if _, err := settler.Recover(ctx, now); err != nil {
		log.Fatal(err)
	}

	const opFinalSettlement ref.Op = 0x0103
	match, player := uint64(42), uint64(7)
	key := ref.KeyOf(opFinalSettlement, match, player)
	payload := binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, player), 100)
	for i := 0; i < 3; i++ { // the client retries twice
		res, err := settler.Apply(ctx, key, payload, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			log.Fatal(err) // not acked: the client retries
		}
		fmt.Printf("fresh=%v caught=%v\n", res.Fresh, res.Caught)
	}
	var coins int64
	if err := store.DB().QueryRow(`SELECT coins FROM balances WHERE player = ?`, int64(player)).Scan(&coins); err != nil {
		log.Fatal(err)
	}
	fmt.Println("player 7 coins:", coins)
	// Output:
	// fresh=true caught=none
	// fresh=false caught=window
	// fresh=false caught=window
	// player 7 coins: 100
}
