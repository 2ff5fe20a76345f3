package postcard_test

import (
	"reflect"
	"testing"
)

// assertEqual compares decoded values structurally; a nil and an empty
// slice count as equal because the wire format cannot tell them apart.
func assertEqual(t testing.TB, got, want any) {
	t.Helper()
	if !looselyEqual(reflect.ValueOf(got), reflect.ValueOf(want)) {
		t.Fatalf("decoded value differs:\n got %#v\nwant %#v", got, want)
	}
}

func looselyEqual(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len(); i++ {
			if !looselyEqual(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return looselyEqual(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if !looselyEqual(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	default:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
}
