// Package layers holds no code: its test keeps internal/ below the layers
// that use it (DESIGN.md, "Architecture"). The runtime helpers under
// internal/ sit below ref, whose stores use them, so they import nothing
// of the project but each other; the test kits under internal/testkit sit
// above ref (they exercise it) and below the harness, so they import
// internal/, ref and ref's packages only. The harness (engine, faults,
// props), the designs (impls), bench and the commands are above both.
package layers
