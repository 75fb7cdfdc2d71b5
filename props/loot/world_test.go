package lootprops

import (
	"reflect"
	"testing"
)

// TestWorldSetsEveryFunc: the loot world leaves no func to the
// engine's defaults (lootfaults.World's own and this package's Runs, Judge,
// Describe and renderings together), so a renamed or forgotten field shows
// here rather than as an empty column in matrix.md, and a caller (the
// command's list) may call any of them.
func TestWorldSetsEveryFunc(t *testing.T) {
	v := reflect.ValueOf(World)
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Func && f.IsNil() {
			t.Errorf("lootprops.World.%s is nil (go test ./props/loot -run TestWorldSetsEveryFunc)", v.Type().Field(i).Name)
		}
	}
}
