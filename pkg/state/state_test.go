package state_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/state"
)

// Child process modes of the test binary (see TestMain).
const (
	// helperEnv: save state under a file-size limit, so a real write fails half-way through.
	helperEnv = "STATE_TEST_SAVE_UNDER_FSIZE_LIMIT"
	// saveLoopEnv: save increasing counters until killed, printing each one once Save returned.
	saveLoopEnv = "STATE_TEST_SAVE_LOOP"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(saveUnderFileSizeLimit(dir))
	}
	if dir := os.Getenv(saveLoopEnv); dir != "" {
		os.Exit(saveUntilKilled(dir))
	}
	os.Exit(m.Run())
}

// saveUnderFileSizeLimit limits files to 4 KiB, then saves 64 KiB of state over a saved one: the
// write of the new slots file fails with EFBIG before any rename.
func saveUnderFileSizeLimit(dir string) int {
	s, _, err := state.Open(dir, "gen")
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	limit := syscall.Rlimit{Cur: 4096, Max: 4096}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 2
	}
	err = s.Save(bytes.Repeat([]byte("new state"), 8<<10))
	if err == nil {
		fmt.Fprintln(os.Stderr, "save succeeded beyond the file size limit")
		return 1
	}
	fmt.Println(err)
	return 0
}

func TestPath(t *testing.T) {
	tests := []struct{ dir, key, want string }{
		{"local_state", "random", "local_state/source_random.state"},
		{"/var/lib/iggy/", "pg_main", "/var/lib/iggy/source_pg_main.state"},
		{"", "k", "source_k.state"},
	}
	for _, tt := range tests {
		if got := state.Path(tt.dir, tt.key); got != tt.want {
			t.Errorf("Path(%q, %q) = %q, want %q", tt.dir, tt.key, got, tt.want)
		}
	}
}

// Upstream-format files alone, as upstream's runtime leaves them.
func TestLoadUpstreamFile(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, dir string) string // returns the dir passed to Load
		want    []byte
		wantErr string // substring; empty: no error
	}{
		{
			name:    "missing file is no state",
			prepare: func(t *testing.T, dir string) string { return dir },
		},
		{
			name: "empty file is no state",
			prepare: func(t *testing.T, dir string) string {
				writeFile(t, state.Path(dir, "gen"), nil)
				return dir
			},
		},
		{
			name: "saved bytes come back unchanged",
			prepare: func(t *testing.T, dir string) string {
				writeFile(t, state.Path(dir, "gen"), []byte{0x91, 0x2a})
				return dir
			},
			want: []byte{0x91, 0x2a},
		},
		{
			name: "orphaned temporary file is ignored",
			prepare: func(t *testing.T, dir string) string {
				writeFile(t, state.Path(dir, "gen"), []byte("committed"))
				writeFile(t, state.Path(dir, "gen")+".tmp", []byte("half-writ"))
				return dir
			},
			want: []byte("committed"),
		},
		{
			name:    "missing directory is an error naming the path",
			prepare: func(t *testing.T, dir string) string { return filepath.Join(dir, "absent") },
			wantErr: "absent/source_gen.state",
		},
		{
			name: "state path that is a file is an error",
			prepare: func(t *testing.T, dir string) string {
				file := filepath.Join(dir, "plain")
				writeFile(t, file, []byte("x"))
				return file
			},
			wantErr: "plain/source_gen.state",
		},
		{
			name: "unreadable state file is an error naming it",
			prepare: func(t *testing.T, dir string) string {
				if err := os.Mkdir(state.Path(dir, "gen"), 0o700); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			wantErr: "source_gen.state",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.prepare(t, t.TempDir())
			for _, load := range loaders {
				got, err := load.fn(dir, "gen")
				if tt.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("%s error = %v, want one containing %q", load.name, err, tt.wantErr)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", load.name, err)
				}
				assertState(t, load.name, got, tt.want)
			}
		})
	}
}

// loaders read the state both ways a caller can: Load, and Open (then Close without a save).
var loaders = []struct {
	name string
	fn   func(dir, key string) ([]byte, error)
}{
	{"Load", state.Load},
	{"Open", func(dir, key string) ([]byte, error) {
		s, data, err := state.Open(dir, key)
		if err != nil {
			return nil, err
		}
		return data, s.Close()
	}},
}

func TestInvalidKeysAreRefused(t *testing.T) {
	dir := t.TempDir()
	for _, key := range []string{"", "../escape", `a\b`, "nul\x00"} {
		if _, err := state.Load(dir, key); !errors.Is(err, state.ErrInvalidKey) {
			t.Errorf("Load(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if _, _, err := state.Open(dir, key); !errors.Is(err, state.ErrInvalidKey) {
			t.Errorf("Open(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestSaveReplacesState(t *testing.T) {
	big := bytes.Repeat([]byte("big state "), 1000) // outgrows the first slot size
	tests := []struct {
		name  string
		saves [][]byte
		want  []byte
	}{
		{"first save", [][]byte{[]byte("one")}, []byte("one")},
		{"later save wins", [][]byte{[]byte("one"), []byte("second")}, []byte("second")},
		{"third save overwrites the first slot", [][]byte{[]byte("one"), []byte("two"), []byte("three")}, []byte("three")},
		{"shorter save leaves no tail", [][]byte{[]byte("a long state"), []byte("ab")}, []byte("ab")},
		{"empty save loads as no state", [][]byte{[]byte("one"), {}}, nil},
		{"a state outgrowing its slot", [][]byte{[]byte("one"), big}, big},
		{"a small state after a big one", [][]byte{[]byte("one"), big, []byte("two"), []byte("three")}, []byte("three")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, _, err := state.Open(dir, "gen")
			if err != nil {
				t.Fatal(err)
			}
			for _, data := range tt.saves {
				if err := s.Save(data); err != nil {
					t.Fatalf("Save(%.20q): %v", data, err)
				}
			}
			// While running (and after a crash): the slots file.
			got, err := state.Load(dir, "gen")
			if err != nil {
				t.Fatalf("Load while open: %v", err)
			}
			assertState(t, "Load while open", got, tt.want)
			if _, again, err := state.Open(dir, "gen"); err != nil {
				t.Fatalf("Open while open: %v", err)
			} else {
				assertState(t, "Open while open", again, tt.want)
			}
			// After a clean stop: upstream's file, with no slots file beside it.
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			raw, err := os.ReadFile(state.Path(dir, "gen"))
			if err != nil {
				t.Fatalf("upstream file after Close: %v", err)
			}
			if !bytes.Equal(raw, tt.want) {
				t.Fatalf("upstream file after Close = %.40q, want %.40q", raw, tt.want)
			}
			assertFiles(t, dir, "source_gen.state")
		})
	}
}

func TestSaveWritesOwnerOnlyFiles(t *testing.T) {
	dir := t.TempDir()
	// Temporary files left by a crash, with a wider mode than state may have.
	for _, name := range []string{"source_gen.slots.tmp", "source_gen.state.tmp"} {
		writeFile(t, filepath.Join(dir, name), []byte("stale"))
		if err := os.Chmod(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, _, err := state.Open(dir, "gen")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save([]byte("secret")); err != nil {
		t.Fatalf("Save: %v", err)
	}
	assertMode(t, slotsFile(dir))
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	assertMode(t, state.Path(dir, "gen"))
}

func TestFailedSaveKeepsPreviousState(t *testing.T) {
	tests := []struct {
		name string
		// failingSave saves "new state" for key "gen" in a way that fails, and returns the error text.
		failingSave func(t *testing.T, dir string) string
		wantErr     string
	}{
		{
			name: "new slots file cannot be created",
			failingSave: func(t *testing.T, dir string) string {
				s, _, err := state.Open(dir, "gen")
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(slotsFile(dir)+".tmp", 0o700); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(slotsFile(dir) + ".tmp")
				err = s.Save(bytes.Repeat([]byte("new state"), 1000)) // outgrows the slot: a new file
				if err == nil {
					t.Fatal("Save succeeded, want an error")
				}
				return err.Error()
			},
			wantErr: "is a directory",
		},
		{
			name:        "write fails half-way under a file size limit (child process)",
			failingSave: saveInChildUnderFileSizeLimit,
			wantErr:     "file too large",
		},
		{
			name: "state directory removed",
			failingSave: func(t *testing.T, dir string) string {
				s, _, err := state.Open(dir, "gen")
				if err != nil {
					t.Fatal(err)
				}
				moved := dir + ".moved"
				if err := os.Rename(dir, moved); err != nil {
					t.Fatal(err)
				}
				err = s.Save(bytes.Repeat([]byte("new state"), 1000))
				if err := os.Rename(moved, dir); err != nil {
					t.Fatal(err)
				}
				if err == nil {
					t.Fatal("Save succeeded, want an error")
				}
				return err.Error()
			},
			wantErr: "no such file or directory",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "state")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			first, _, err := state.Open(dir, "gen")
			if err != nil {
				t.Fatal(err)
			}
			if err := first.Save([]byte("old state")); err != nil {
				t.Fatalf("first Save: %v", err)
			}
			msg := tt.failingSave(t, dir)
			if !strings.Contains(msg, "source_gen.slots") || !strings.Contains(msg, tt.wantErr) {
				t.Fatalf("Save error = %q, want one naming the state file and %q", msg, tt.wantErr)
			}
			got, err := state.Load(dir, "gen")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if string(got) != "old state" {
				t.Fatalf("state after failed save = %q, want the old state intact", got)
			}
			assertFiles(t, dir, "source_gen.slots")
		})
	}
}

// saveInChildUnderFileSizeLimit re-runs the test binary as a child that saves under RLIMIT_FSIZE
// and returns the error it printed.
func saveInChildUnderFileSizeLimit(t *testing.T, dir string) string {
	t.Helper()
	out, err := childCommand(t, helperEnv+"="+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("child save process: %v\n%s", err, out)
	}
	return string(out)
}

func TestOpenMissingDirectoryFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	_, _, err := state.Open(dir, "gen")
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "absent/source_gen.state") {
		t.Fatalf("Open error = %v, want a not-exist error naming the file", err)
	}
}

func TestSaveAfterCloseFails(t *testing.T) {
	s, _, err := state.Open(t.TempDir(), "gen")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Save([]byte("late")); !errors.Is(err, state.ErrClosed) {
		t.Fatalf("Save after Close = %v, want ErrClosed", err)
	}
}

func TestConcurrentSavesLeaveOneWholeState(t *testing.T) {
	dir := t.TempDir()
	s, _, err := state.Open(dir, "gen")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	states := map[string]bool{}
	for i := range 16 {
		data := strings.Repeat(fmt.Sprint(i%10), 1000+i*300) // some outgrow the slot
		states[data] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.Save([]byte(data)); err != nil {
				t.Errorf("Save: %v", err)
			}
		}()
	}
	wg.Wait()
	got, err := state.Load(dir, "gen")
	if err != nil {
		t.Fatal(err)
	}
	if !states[string(got)] {
		t.Fatalf("final state (%d bytes) is none of the saved ones", len(got))
	}
}

func childCommand(t *testing.T, env string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	return cmd
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// slotsFile is the slots file of key "gen" (its name is part of the documented on-disk format).
func slotsFile(dir string) string { return filepath.Join(dir, "source_gen.slots") }

func assertState(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
		t.Fatalf("%s = %.40q (%d bytes), want %.40q (%d bytes)", what, got, len(got), want, len(want))
	}
}

func assertMode(t *testing.T, path string) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("%s mode = %o, want 600", path, mode)
	}
}

// assertFiles checks that dir holds exactly the named files: no temporary file left behind.
func assertFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("files in the state directory = %v, want %v", got, names)
	}
}
