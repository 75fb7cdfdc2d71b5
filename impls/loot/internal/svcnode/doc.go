// Package svcnode runs ref/loot's Service as a loot design's node: the
// design's loot.Store, lock and inventory reached through the node's
// lootfaults.Env, one Env call per store method, lock call and delivery,
// and requests answered from the Service's errors. A design on the
// reference is its store and, for a shortcut, the one part it swaps.
package svcnode
