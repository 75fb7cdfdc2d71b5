package foursig

// Window is one player's FIFO of signatures, oldest first. It lives in the
// player's record (the save), never in a node's memory: "状态只存玩家私有".
type Window []Signature

// Contains reports whether g was processed within the window.
func (w Window) Contains(g Signature) bool {
	for _, h := range w {
		if h == g {
			return true
		}
	}
	return false
}

// Push appends g to a window of capacity c. When the window is full it
// evicts only the oldest signature ("超限只淘汰最旧一条"), or, for the
// mutant clear-on-full, forgets the whole window first ("绝不整体清空，清空即
// 状态遗忘": the rule that mutant breaks).
func (w Window) Push(g Signature, c int, clearOnFull bool) Window {
	if len(w) >= c {
		if clearOnFull {
			w = w[:0]
		} else {
			// Keep the newest c-1, then append: the window never exceeds c.
			w = append(w[:0], w[len(w)-(c-1):]...)
		}
	}
	return append(w, g)
}
