package faults

import "github.com/onceproof/onceproof/engine"

// Schedule is one run of the world, as data: it prints to text (World.Format) and
// parses back (World.Parse), so a counterexample is a file you can read, diff, edit
// and replay. The Frame holds the family, the nodes, the deliveries (each
// naming a settlement by its index: Delivery.Msg), the faults and the
// sender; the settlements are the ground truth.
type Schedule struct {
	engine.Frame
	// Settlements is the ground truth; Settlements[i].ID == i.
	Settlements []Settlement
}
