package metrics

import (
	"reflect"
	"testing"
	"unsafe"
)

// Every word of the shared layout must be 8-byte aligned for the 64-bit atomics, and the layout
// must fit the file.
func TestPageLayoutIsAlignedAndFits(t *testing.T) {
	if numStageBuckets != len(StageBuckets) {
		t.Fatalf("numStageBuckets = %d, len(StageBuckets) = %d", numStageBuckets, len(StageBuckets))
	}
	typ := reflect.TypeFor[cells]()
	for i := range typ.NumField() {
		if f := typ.Field(i); f.Offset%8 != 0 {
			t.Errorf("field %s at offset %d is not 8-byte aligned", f.Name, f.Offset)
		}
	}
	if unsafe.Sizeof(cells{}) > uintptr(pageFileSize) {
		t.Errorf("cells take %d bytes, the file %d", unsafe.Sizeof(cells{}), pageFileSize)
	}
}

// A runner killed while it wrote its status leaves the sequence odd: readers give up instead of
// spinning, and the next runner's first write repairs it.
func TestStatusLockSurvivesADeadWriter(t *testing.T) {
	c := new(cells)
	c.publish(StatusRunning, nil, "1.0.0")
	c.seq.Add(1) // a writer that entered and died
	if _, ok := c.readTexts(); ok {
		t.Fatal("read texts under a writer that never left")
	}
	if got := c.readStatus(); got != "" {
		t.Fatalf("read status %q under a writer that never left, want \"\"", got)
	}
	c.publish(StatusError, &LastError{Message: "boom", Timestamp: 1}, "1.0.0")
	if got := c.readStatus(); got != StatusError {
		t.Fatalf("status after the next write = %q", got)
	}
	got, ok := c.readTexts()
	if !ok || got.status != StatusError || got.lastError == nil || got.lastError.Message != "boom" || got.pluginVersion != "1.0.0" {
		t.Fatalf("after the next write: %+v ok=%v", got, ok)
	}
}

// Every status a runner publishes reads back as itself, the ones added after upstream's five
// (paused, standby) included; their stored indexes only ever grow, so pages of older runners
// still read.
func TestEveryStatusRoundTrips(t *testing.T) {
	for i, st := range []string{StatusStarting, StatusRunning, StatusStopping, StatusStopped, StatusError, StatusPaused, StatusStandby} {
		if got := statusIndex(st); got != uint64(i+1) {
			t.Errorf("status %q stored as %d, want %d", st, got, i+1)
		}
		c := new(cells)
		c.publish(st, nil, "1.0.0")
		if got, ok := c.readTexts(); !ok || got.status != st {
			t.Errorf("status %q read back as %q (ok %v)", st, got.status, ok)
		}
	}
}
