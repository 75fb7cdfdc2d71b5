// Package faults is the world model of the onceproof harness: settlements
// and their deliveries, fault points and schedules as data (Schedule, with
// its text form: Format, Parse), generators per fault family (Gen,
// Generate), the world rules a schedule keeps (CheckWorld), and the
// deterministic runner that plays a schedule against a Design and records a
// History (Run). A design touches the world only through its Env; Design
// states its duties, Run what the runner guarantees, History how to read
// what it recorded. Package faultstest holds minimal designs for tests.
package faults
