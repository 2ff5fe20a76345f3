package state_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// What an operator writes into a stopped source's state is what its next start loads, whichever
// file held the state before: a running source's slots file or upstream's file.
func TestReplaceAndDeleteAreWhatTheNextStartLoads(t *testing.T) {
	dir := t.TempDir()
	if data, at, err := state.Current(dir, "src"); err != nil || data != nil || !at.IsZero() {
		t.Fatalf("Current without state = %q, %v, %v; want nothing", data, at, err)
	}
	// A running source saved through the slots file and was killed (no Close).
	store, _, err := state.Open(dir, "src")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Save([]byte{0x91, 0x05}); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Add(-time.Second)
	data, at, err := state.Current(dir, "src")
	if err != nil || !bytes.Equal(data, []byte{0x91, 0x05}) || at.Before(before) {
		t.Fatalf("Current after a save = %x, %v, %v", data, at, err)
	}
	if err := state.Replace(dir, "src", []byte{0x91, 0x2a}); err != nil {
		t.Fatal(err)
	}
	loaded, err := state.Load(dir, "src")
	if err != nil || !bytes.Equal(loaded, []byte{0x91, 0x2a}) {
		t.Fatalf("Load after Replace = %x, %v", loaded, err)
	}
	if _, err := os.Stat(state.Path(dir, "src")); err != nil {
		t.Fatalf("Replace left no upstream-format file: %v", err)
	}
	if err := state.Delete(dir, "src"); err != nil {
		t.Fatal(err)
	}
	if loaded, err := state.Load(dir, "src"); err != nil || loaded != nil {
		t.Fatalf("Load after Delete = %x, %v; want nothing", loaded, err)
	}
	if err := state.Delete(dir, "src"); err != nil {
		t.Fatalf("Delete without state: %v", err)
	}
	if err := state.Replace(dir, "../x", []byte{1}); err == nil {
		t.Fatal("Replace took a key naming another directory")
	}
	_ = store.Close()
}
