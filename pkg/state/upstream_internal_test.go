package state

import (
	"bytes"
	"testing"
)

// BenchmarkUpstreamSave is upstream's save (write a temporary file, fdatasync, rename, fsync the
// directory), the cost per source batch before the slots file; compare with BenchmarkStoreSave.
func BenchmarkUpstreamSave(b *testing.B) {
	dir := b.TempDir()
	data := bytes.Repeat([]byte{0x91, 0x2a}, 32)
	b.ReportAllocs()
	for b.Loop() {
		if err := writeUpstream(dir, "gen", data); err != nil {
			b.Fatal(err)
		}
	}
}
