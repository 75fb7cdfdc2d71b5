// Package foursigclearonfull is the row "four-sig-clear-on-full": four-sig
// (source document 001_73391d5f79abbe3d.txt, section 5) that empties the
// window when it is full instead of evicting the oldest signature, breaking
// "绝不整体清空，清空即状态遗忘" ("never clear the whole window: clearing is
// forgetting state"). Its declaration derives where it differs from
// four-sig.
package foursigclearonfull

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig clearing its window when full.
var Design = foursig.Variant{
	Row:   "four-sig-clear-on-full",
	Rules: foursig.Config{Capacity: foursig.Capacity, ClearOnFull: true, Fields: foursig.AllFields},
	Decl: foursig.Mutant("four-sig that clears the window when it is full instead of evicting the oldest signature, "+
		"breaking section 5's \"never clear the whole window: clearing is forgetting state\" (and section 7: "+
		"\"clearing when full is forgetting state, legal only for a pure cache\"). Its verdicts are four-sig's "+
		"except under duplicate: in the other families four-sig holds, a copy or retry comes soon after its "+
		"original, before a clear can forget it.",
		[]faults.Expect{{Families: []faults.Family{faults.Duplicate}, Props: []faults.Property{faults.NoDup},
			Why: "right after a clear the window holds one signature, so a copy of any of the three it forgot, all " +
				"of them inside the two-match span, is credited again; duplicate's copies reach into the " +
				"next-but-one match, right after a clear (NoDup)"}}),
}
