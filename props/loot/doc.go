// Package lootprops judges loot allocation designs: a property per kind of
// harm (Judge turns a lootfaults.History into a Report: NoOverGrant,
// NoDupGrant, NoLostGrant, FrozenClaims, RuleOrder, Replayable,
// MembersOnly, OnTime, InWindow, ForwardOnly, HonestAnswer, Responsive;
// harms.go lists source 004's harms and what catches each), the ranking
// oracle they compare results with, and World, the loot subject as package
// engine runs it: RunMatrix, TestDesign and the renderings. The
// repository's DESIGN.md tells the story of each property.
package lootprops
