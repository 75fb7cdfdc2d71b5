// Package lootservice judges a running loot service, in any language, as a
// black box over HTTP: a Spec says how to call its API and read its
// answers (DefaultSpec is cmd/lootd's); a Workload is a loot family's
// generated schedule as requests under one run tag; Drive sends it to one
// or more instances, at the schedule's times and concurrently where it
// says, while sampling every session through the service's read endpoints,
// and returns a Record of every request, answer and sample; Judge turns a
// Record into the loot properties' verdicts, computed by package lootprops
// from histories built of what the samples prove, each property saying how
// it was judged, or that it was not (Finding). Campaign runs several seeds
// and writes a record file per run; Replay reruns a record's workload.
// Each run has a fault plan (PlanFaults, from its family and seed):
// network faults through netfault proxies in front of the instances,
// inventory faults in the hosted inventory, process faults on instances
// the harness started; Drive applies them and the record keeps the plan
// and every step as applied, so a replay faults the same way. Reduce
// shrinks a failing record by rerunning it with parts removed.
//
// What a black box cannot see is never reported as held: a sample proves a
// state held at some instant between its request and its answer, so the
// judge places each sample where that proof is sound for the property at
// hand (judge.go says which), and a property that needs more (the order of
// two claims the samples cannot order, the inventory's deliveries) is
// "not judged" with the reason.
package lootservice
