package postgres

import (
	"reflect"
	"strings"
	"testing"
)

// TestTestClockReachesEveryStatement: fields lists every statement, so
// withClock leaves no now() behind; a statement it missed would judge by
// the real clock under a test clock and loottest's microsecond probes
// would fail, or worse, pass by luck.
func TestTestClockReachesEveryStatement(t *testing.T) {
	q := sqlQueries
	if got, want := len(q.fields()), reflect.TypeOf(q).NumField(); got != want {
		t.Fatalf("queries.fields lists %d statements, the struct has %d", got, want)
	}
	clocked := q.withClock("(SELECT now FROM c)")
	v := reflect.ValueOf(clocked)
	for i := range v.NumField() {
		if s := v.Field(i).String(); strings.Contains(s, "now()") || strings.Contains(s, "clock_timestamp") {
			t.Errorf("statement %s still reads the database clock under a test clock:\n%s", v.Type().Field(i).Name, s)
		}
	}
	if !strings.Contains(sqlQueries.beginSettle, "now()") {
		t.Error("withClock changed the production statements: they must keep reading now()")
	}
}
