package props_test

import (
	"testing"

	"github.com/onceproof/onceproof/impls/refdesign"
	"github.com/onceproof/onceproof/props"
)

// The kit runs against the reference first, as fstest.TestFS runs against
// its own MapFS: if ref fails here, the kit (or ref) is broken, not yours.
func TestReferencePassesTheKit(t *testing.T) {
	props.TestDesign(t, refdesign.Design{}, props.Dir(t.TempDir()))
}
