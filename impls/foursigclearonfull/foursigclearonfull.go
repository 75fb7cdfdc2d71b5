// Package foursigclearonfull is the row "four-sig-clear-on-full": four-sig
// (source document 001_73391d5f79abbe3d.txt, section 5) that empties the
// window when it is full instead of evicting the oldest signature. It breaks
// "超限只淘汰最旧一条，绝不整体清空，清空即状态遗忘" (and section 7: "满了清空是
// 状态遗忘，只对纯缓存合法"): right after a clear the window holds one
// signature, so a copy of any of the three it forgot, all of them inside
// the two-match span, is credited again (NoDup).
//
// Declared verdicts: four-sig's, and duplicate (copies reach into the
// next-but-one match, right after a clear) fails NoDup.
package foursigclearonfull

import (
	"github.com/onceproof/onceproof/faults"
	"github.com/onceproof/onceproof/impls/foursig"
)

// Design is four-sig clearing its window when full.
var Design = foursig.Variant{
	Row:   "four-sig-clear-on-full",
	Rules: foursig.Config{Capacity: foursig.Capacity, ClearOnFull: true, Fields: foursig.AllFields},
	Expect: foursig.Expect(faults.Expectation{
		faults.Duplicate: {faults.NoDup},
	}),
	Text: "four-sig that clears the window when it is full (source 001 section 5: \"绝不整体清空，清空即状态遗忘\"). " +
		"After each clear the window remembers one signature, so a copy of a settlement from the last " +
		"two matches arriving just after the clear is credited again.",
}

var _ faults.Design = Design
