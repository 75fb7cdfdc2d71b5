package httpinventory_test

import (
	"log"

	"github.com/onceproof/onceproof/ref/loot"
	"github.com/onceproof/onceproof/ref/loot/httpinventory"
)

// A Service whose items go to an inventory service of their own: the
// settler and compensation deliver every grant through it, keyed by the
// grant number.
func ExampleNew() {
	inv, err := httpinventory.New(httpinventory.Options{URL: "http://inventory.internal:9000/deliveries"})
	if err != nil {
		log.Fatal(err)
	}
	defer inv.Close()
	cfg := loot.Config{Inventory: inv} // and Store, Fairness, Lock as usual
	_ = cfg
}
