package props

import (
	"reflect"
	"testing"
)

// TestWorldSetsEveryFunc: the settlement world leaves no func to the
// engine's defaults (faults.World's own and this package's Judge,
// Describe and renderings together), so a renamed or forgotten field shows
// here rather than as an empty column in matrix.md.
func TestWorldSetsEveryFunc(t *testing.T) {
	v := reflect.ValueOf(World)
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Func && f.IsNil() {
			t.Errorf("props.World.%s is nil (go test ./props -run TestWorldSetsEveryFunc)", v.Type().Field(i).Name)
		}
	}
}
