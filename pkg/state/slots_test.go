package state_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// The documented layout of a slots file with small states: a header page, then two 4 KiB slots.
const (
	pageSize  = 4096
	slotBytes = 4096
	slot0     = pageSize
	slot1     = pageSize + slotBytes
)

// crashedStore saves each state in turn through a fresh Store per save, never closing one, as a
// runner killed after each save would; it returns the slots file's bytes after each save.
func crashedStore(t *testing.T, dir string, states ...string) [][]byte {
	t.Helper()
	var images [][]byte
	for _, st := range states {
		s, _, err := state.Open(dir, "gen")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Save([]byte(st)); err != nil {
			t.Fatalf("Save(%q): %v", st, err)
		}
		image, err := os.ReadFile(slotsFile(dir))
		if err != nil {
			t.Fatal(err)
		}
		images = append(images, image)
	}
	return images
}

// imageLoader returns a function that makes a slots file of its own directory hold image and
// loads it. The file is rewritten in place, not replaced: thousands of truncate-and-rewrite cycles
// would each start a writeback on ext4 (auto_da_alloc).
func imageLoader(t *testing.T) func(image []byte) ([]byte, error) {
	dir := t.TempDir()
	f, err := os.OpenFile(slotsFile(dir), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func(image []byte) ([]byte, error) {
		if err := f.Truncate(int64(len(image))); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(image, 0); err != nil {
			t.Fatal(err)
		}
		return state.Load(dir, "gen")
	}
}

// A save torn at any byte, in either order of the disk writing its sectors, loads as the previous
// state, or as the new one once every byte of it landed.
func TestTornSaveAtEveryByteLoadsAWholeState(t *testing.T) {
	// "first" in slot 0, "second" in slot 1; the third save goes to slot 0 (the older one), from a
	// new Store that found "second" newest.
	images := crashedStore(t, t.TempDir(), "first", "second", "the third state, longer than the first")
	before, after := images[1], images[2]
	if !bytes.Equal(before[slot1:], after[slot1:]) || !bytes.Equal(before[:slot0], after[:slot0]) {
		t.Fatal("the third save touched more than slot 0")
	}
	tests := []struct {
		name string
		torn func(k int) []byte // the file with k bytes of the slot-0 write landed
	}{
		{"front landed first", func(k int) []byte {
			img := bytes.Clone(before)
			copy(img[slot0:slot0+k], after[slot0:slot0+k])
			return img
		}},
		{"back landed first", func(k int) []byte {
			img := bytes.Clone(before)
			copy(img[slot1-k:slot1], after[slot1-k:slot1])
			return img
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loadImage := imageLoader(t)
			for k := 0; k <= slotBytes; k++ {
				img := tt.torn(k)
				got, err := loadImage(img)
				if err != nil {
					t.Fatalf("torn at %d: Load: %v", k, err)
				}
				want := "second"
				if bytes.Equal(img, after) {
					want = "the third state, longer than the first"
				}
				if string(got) != want {
					t.Fatalf("torn at %d: Load = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// A byte damaged anywhere in a slot makes that slot invalid and the other one wins; damage in both
// slots, or in the header, is an error, never a made-up state.
func TestCorruptByteAtEveryOffset(t *testing.T) {
	images := crashedStore(t, t.TempDir(), "older state", "newer state")
	image := images[1]
	used := func(slot int) int { return 20 + len("older state") } // header + state; same length
	tests := []struct {
		name    string
		from    int // first offset damaged
		to      int // end of the damaged range
		want    string
		wantErr bool
	}{
		{"header", 0, 32, "", true},
		{"newest slot", slot1, slot1 + used(1), "older state", false},
		{"older slot", slot0, slot0 + used(0), "newer state", false},
		{"unused slot tail", slot0 + used(0), slot1, "newer state", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loadImage := imageLoader(t)
			for off := tt.from; off < tt.to; off++ {
				img := bytes.Clone(image)
				img[off] ^= 0x5a
				got, err := loadImage(img)
				if tt.wantErr {
					if !errors.Is(err, state.ErrCorrupt) {
						t.Fatalf("byte %d damaged: Load = %q, %v; want ErrCorrupt", off, got, err)
					}
					continue
				}
				if err != nil || string(got) != tt.want {
					t.Fatalf("byte %d damaged: Load = %q, %v; want %q", off, got, err, tt.want)
				}
			}
		})
	}
	t.Run("both slots", func(t *testing.T) {
		img := bytes.Clone(image)
		img[slot0+25] ^= 1
		img[slot1+25] ^= 1
		if _, err := imageLoader(t)(img); !errors.Is(err, state.ErrCorrupt) {
			t.Fatalf("Load = %v, want ErrCorrupt", err)
		}
	})
}

// A file cut at any length loads the newest slot still whole, or fails as corrupt when none is.
func TestTruncatedFileAtEveryLength(t *testing.T) {
	images := crashedStore(t, t.TempDir(), "older state", "newer state")
	image := images[1]
	end := func(slot int) int { return slot + 20 + len("older state") }
	loadImage := imageLoader(t)
	for n := 0; n <= len(image); n++ {
		got, err := loadImage(image[:n])
		switch {
		case n >= end(slot1):
			if err != nil || string(got) != "newer state" {
				t.Fatalf("cut at %d: Load = %q, %v; want the newer state", n, got, err)
			}
		case n >= end(slot0):
			if err != nil || string(got) != "older state" {
				t.Fatalf("cut at %d: Load = %q, %v; want the older state", n, got, err)
			}
		default:
			if !errors.Is(err, state.ErrCorrupt) {
				t.Fatalf("cut at %d: Load = %q, %v; want ErrCorrupt", n, got, err)
			}
		}
	}
}

// An upstream-format file is read at open and stays the truth until a save; the slots file then
// wins while upstream's file is unchanged, and loses to one written after it (by upstream's
// runtime, after a crash of ours).
func TestUpstreamFileCoexistence(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, dir string) string // returns the state Load must find
	}{
		{"migration: upstream file read at open", func(t *testing.T, dir string) string {
			writeFile(t, state.Path(dir, "gen"), []byte("upstream"))
			_, got, err := state.Open(dir, "gen")
			if err != nil || string(got) != "upstream" {
				t.Fatalf("Open = %q, %v; want the upstream file's state", got, err)
			}
			return "upstream"
		}},
		{"a save after migration wins over the old upstream file", func(t *testing.T, dir string) string {
			writeFile(t, state.Path(dir, "gen"), []byte("upstream"))
			crashedStore(t, dir, "ours 1", "ours 2")
			return "ours 2"
		}},
		{"an upstream file written after our crash wins", func(t *testing.T, dir string) string {
			writeFile(t, state.Path(dir, "gen"), []byte("upstream"))
			crashedStore(t, dir, "ours")
			writeFile(t, state.Path(dir, "gen"), []byte("upstream later"))
			return "upstream later"
		}},
		{"an upstream file appearing after our crash wins", func(t *testing.T, dir string) string {
			crashedStore(t, dir, "ours")
			writeFile(t, state.Path(dir, "gen"), []byte("upstream later"))
			return "upstream later"
		}},
		{"a save after the newer upstream file wins again", func(t *testing.T, dir string) string {
			crashedStore(t, dir, "ours")
			writeFile(t, state.Path(dir, "gen"), []byte("upstream later"))
			crashedStore(t, dir, "ours again")
			return "ours again"
		}},
		{"removing the old upstream file keeps ours", func(t *testing.T, dir string) string {
			writeFile(t, state.Path(dir, "gen"), []byte("upstream"))
			crashedStore(t, dir, "ours")
			if err := os.Remove(state.Path(dir, "gen")); err != nil {
				t.Fatal(err)
			}
			return "ours"
		}},
		{"a copied directory keeps the verdict (content, not inodes)", func(t *testing.T, dir string) string {
			old := t.TempDir()
			writeFile(t, state.Path(old, "gen"), []byte("upstream"))
			crashedStore(t, old, "ours")
			for _, name := range []string{"source_gen.state", "source_gen.slots"} {
				data, err := os.ReadFile(filepath.Join(old, name))
				if err != nil {
					t.Fatal(err)
				}
				info, err := os.Stat(filepath.Join(old, name))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(dir, name), data)
				// Copies get other times as well as other inodes: an hour later, say.
				later := info.ModTime().Add(time.Hour)
				if err := os.Chtimes(filepath.Join(dir, name), later, later); err != nil {
					t.Fatal(err)
				}
			}
			return "ours"
		}},
		{"a crash inside Close leaves the same state in both files", func(t *testing.T, dir string) string {
			writeFile(t, state.Path(dir, "gen"), []byte("upstream"))
			images := crashedStore(t, dir, "ours")
			s, _, err := state.Open(dir, "gen")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil { // writes upstream's file, removes the slots file
				t.Fatal(err)
			}
			writeFile(t, slotsFile(dir), images[0]) // as if the removal never reached the disk
			return "ours"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			want := tt.run(t, dir)
			for _, load := range loaders {
				got, err := load.fn(dir, "gen")
				if err != nil || string(got) != want {
					t.Fatalf("%s = %q, %v; want %q", load.name, got, err, want)
				}
			}
		})
	}
}

// A state file deleted while the connector runs comes back at the next save, as with upstream's
// save, instead of the saves going into a file nobody reads.
func TestSaveAfterTheFileWasDeletedWritesItAgain(t *testing.T) {
	dir := t.TempDir()
	s, _, err := state.Open(dir, "gen")
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range []string{"one", "two"} {
		if err := s.Save([]byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(slotsFile(dir)); err != nil {
		t.Fatal(err)
	}
	if err := s.Save([]byte("three")); err != nil {
		t.Fatal(err)
	}
	if got, err := state.Load(dir, "gen"); err != nil || string(got) != "three" {
		t.Fatalf("Load = %q, %v; want the state saved after the deletion", got, err)
	}
}

func TestCloseWithoutSaveWritesNothing(t *testing.T) {
	dir := t.TempDir()
	s, got, err := state.Open(dir, "gen")
	if err != nil || got != nil {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	assertFiles(t, dir)
}

// saveUntilKilled is the child of TestKill9DuringSavesKeepsTheLastAckedState: it saves 1, 2, 3, …
// (some states outgrow the slot, so both kinds of save run) and prints each after Save returned,
// the point where a runner would ACK.
func saveUntilKilled(dir string) int {
	s, _, err := state.Open(dir, "gen")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	out := bufio.NewWriter(os.Stdout)
	for n := 1; ; n++ {
		data := []byte(strconv.Itoa(n))
		if n%50 == 0 {
			data = append(data, bytes.Repeat([]byte(" "), n*10)...)
		}
		if err := s.Save(data); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, n)
		out.Flush()
	}
}

// A process killed with SIGKILL at an arbitrary point of its save loop leaves the last state whose
// Save returned, or the one being saved.
func TestKill9DuringSavesKeepsTheLastAckedState(t *testing.T) {
	for round := range 5 {
		dir := t.TempDir()
		cmd := childCommand(t, saveLoopEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		acked := 0
		for acked < 20+round*37 && lines.Scan() {
			acked, _ = strconv.Atoi(lines.Text())
		}
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() { // what it printed before the kill landed
			acked, _ = strconv.Atoi(lines.Text())
		}
		_ = cmd.Wait()
		if acked == 0 {
			t.Fatalf("the child saved nothing: %s", stderr.String())
		}
		got, err := state.Load(dir, "gen")
		if err != nil {
			t.Fatalf("round %d: Load after kill: %v", round, err)
		}
		n, err := strconv.Atoi(string(bytes.TrimRight(got, " ")))
		if err != nil || n < acked || n > acked+1 {
			t.Fatalf("round %d: state after kill = %.20q, want %d or %d", round, got, acked, acked+1)
		}
	}
}

// BenchmarkStoreSave is one in-place save (write one slot, one fdatasync): the cost per source batch.
func BenchmarkStoreSave(b *testing.B) {
	s, _, err := state.Open(b.TempDir(), "gen")
	if err != nil {
		b.Fatal(err)
	}
	data := bytes.Repeat([]byte{0x91, 0x2a}, 32)
	if err := s.Save(data); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Save(data); err != nil {
			b.Fatal(err)
		}
	}
}
