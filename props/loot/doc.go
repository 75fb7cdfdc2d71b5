// Package lootprops judges loot allocation designs: a property per kind of
// harm (Judge turns a lootfaults.History into a Report: NoOverGrant,
// NoDupGrant, NoLostGrant, FrozenClaims, RuleOrder, Replayable,
// MembersOnly, OnTime, ForwardOnly, HonestAnswer, Responsive), the ranking
// oracle they compare results with, and World, the loot subject as package
// engine runs it: RunMatrix, TestDesign and the renderings. The
// repository's DESIGN.md tells the story of each property.
package lootprops
