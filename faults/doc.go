// Package faults is the settlement world of the onceproof harness:
// settlements and their deliveries, schedules as data (Schedule: an
// engine.Frame beside the settlements, with its text form: format,
// parse), generators per fault family (Gen, generate), the world rules a
// schedule keeps (checkWorld, renumber), and Run, which plays a schedule
// against a Design on the engine's runner and records a History. A design
// touches the world only through its Env; Design states its duties.
// Package faultstest holds minimal designs for tests.
package faults
