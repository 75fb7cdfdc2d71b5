package redis

// ReleaseScript is the release script, for running the same command from
// redis-benchmark (bench_test.go).
var ReleaseScript = releaseScript
