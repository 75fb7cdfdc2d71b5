package mysql_test

import (
	"context"
	"log"
	"time"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/memory"
	"github.com/onceproof/onceproof/ref/loot/mysql"
)

// A loot node on a shared MariaDB, as the application's account (SELECT,
// INSERT and UPDATE on the database, the tables made from mysql.Schema by
// another account), delivering into the same database's inventory. Run
// as many nodes as you like on the same DSN. (Not run by go test: it needs
// a server.)
func Example() {
	ctx := context.Background()
	st, err := mysql.Open(ctx, "app:secret@tcp(db.internal:3306)/game", mysql.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	svc, err := loot.New(loot.Config{
		Store:     st,
		Inventory: st.Inventory(),
		Fairness:  memory.NewHistory(), // the game's allocation history in production
	})
	if err != nil {
		log.Fatal(err)
	}
	// On start, and then periodically: settle what is overdue, deliver
	// what a dead node left PENDING.
	if _, err := svc.Recover(ctx); err != nil {
		log.Print(err)
	}
	_, err = svc.Open(ctx, loot.Spec{
		No: "S202401", Dungeon: "ABYSS-3", Loot: "SWORD_001", Quantity: 1,
		Deadline: time.Now().Add(30 * time.Second), // judged by the database's clock
		Rule:     loot.RuleSeeded, Members: []loot.PlayerID{1001, 1002, 1003},
	})
	if err != nil {
		log.Fatal(err)
	}
}
