package faults

// The world rules' and the enumeration's own tests reach them by name;
// everyone else goes through World.
var (
	Renumber     = renumber
	Enumerate    = enumerate
	DefaultScope = defaultScope
)
