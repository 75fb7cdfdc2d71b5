package inventory

import "fmt"

// Fault is what the server does to one delivery instead of answering it
// plainly.
type Fault string

const (
	// None: answer as the protocol says.
	None Fault = ""
	// Fail answers 503 and applies nothing.
	Fail Fault = "fail"
	// TimeoutAfterApply applies the item, then holds the reply for
	// Options.Hold (or until the client hangs up), past the client's
	// timeout: the client sees a timeout although the item is in.
	TimeoutAfterApply Fault = "timeout-after-apply"
	// LoseReply applies the item, then closes the connection without a
	// byte of reply: the client sees the connection end.
	LoseReply Fault = "lose-reply"
)

// Faults are every Fault but None, in the order the package doc lists them.
var Faults = []Fault{Fail, TimeoutAfterApply, LoseReply}

// ParseFault reads a Fault's text ("" and "none" are None).
func ParseFault(s string) (Fault, error) {
	if s == "none" || s == "" {
		return None, nil
	}
	for _, f := range Faults {
		if string(f) == s {
			return f, nil
		}
	}
	return None, fmt.Errorf("inventory: fault %q, want none, fail, timeout-after-apply or lose-reply", s)
}

// A Plan decides each well-formed delivery's fault: index is its place in
// arrival order (from 0, counting every request the server received),
// key its Idempotency-Key, and attempt how many deliveries of that key
// arrived before it (0 for the first). It is called with the server's
// lock held, in arrival order, so it may keep state; it must not block.
type Plan func(index int, key string, attempt int) Fault

// Table is a Plan as data, for a record file: ByIndex first, then the
// key's entry in ByKey for its attempt, then First for any key's first
// delivery; otherwise None.
type Table struct {
	ByIndex map[int]Fault `json:"byIndex,omitempty"`
	// ByKey[key][n] is the fault of the key's n-th delivery (from 0);
	// past the end of the list, None.
	ByKey map[string][]Fault `json:"byKey,omitempty"`
	// First is the fault of every key's first delivery that neither map
	// names: "every grant's first delivery times out after applying".
	First Fault `json:"first,omitempty"`
	_     struct{}
}

// Plan returns t as a Plan. t is read, never written: keep it unchanged
// while the server uses it.
func (t Table) Plan() Plan {
	return func(index int, key string, attempt int) Fault {
		if f, ok := t.ByIndex[index]; ok {
			return f
		}
		if fs, ok := t.ByKey[key]; ok {
			if attempt < len(fs) {
				return fs[attempt]
			}
			return None
		}
		if attempt == 0 {
			return t.First
		}
		return None
	}
}
