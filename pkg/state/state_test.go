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

// helperEnv makes the test binary act as a child process that saves state
// under a file-size limit, so a real write fails half-way through.
const helperEnv = "STATE_TEST_SAVE_UNDER_FSIZE_LIMIT"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperEnv); dir != "" {
		os.Exit(saveUnderFileSizeLimit(dir))
	}
	os.Exit(m.Run())
}

// saveUnderFileSizeLimit limits files to 4 KiB, then saves 64 KiB of state:
// the write of the temporary file fails with EFBIG before any rename.
func saveUnderFileSizeLimit(dir string) int {
	limit := syscall.Rlimit{Cur: 4096, Max: 4096}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		return 2
	}
	err := state.Save(dir, "gen", bytes.Repeat([]byte("new state"), 8<<10))
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

func TestLoad(t *testing.T) {
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
			got, err := state.Load(dir, "gen")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Load error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("Load = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInvalidKeysAreRefused(t *testing.T) {
	dir := t.TempDir()
	for _, key := range []string{"", "../escape", `a\b`, "nul\x00"} {
		if _, err := state.Load(dir, key); !errors.Is(err, state.ErrInvalidKey) {
			t.Errorf("Load(%q) error = %v, want ErrInvalidKey", key, err)
		}
		if err := state.Save(dir, key, []byte("x")); !errors.Is(err, state.ErrInvalidKey) {
			t.Errorf("Save(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestSaveReplacesState(t *testing.T) {
	tests := []struct {
		name  string
		saves [][]byte
		want  []byte
	}{
		{"first save", [][]byte{[]byte("one")}, []byte("one")},
		{"later save wins", [][]byte{[]byte("one"), []byte("second")}, []byte("second")},
		{"shorter save leaves no tail", [][]byte{[]byte("a long state"), []byte("ab")}, []byte("ab")},
		{"empty save loads as no state", [][]byte{[]byte("one"), {}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, s := range tt.saves {
				if err := state.Save(dir, "gen", s); err != nil {
					t.Fatalf("Save(%q): %v", s, err)
				}
			}
			got, err := state.Load(dir, "gen")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
				t.Fatalf("Load = %q, want %q", got, tt.want)
			}
			assertNoTempFile(t, dir)
		})
	}
}

func TestSaveWritesOwnerOnlyFile(t *testing.T) {
	dir := t.TempDir()
	// A temporary file left by a crash, with a wider mode than state may have.
	writeFile(t, state.Path(dir, "gen")+".tmp", []byte("stale"))
	if err := os.Chmod(state.Path(dir, "gen")+".tmp", 0o644); err != nil {
		t.Fatal(err)
	}
	if err := state.Save(dir, "gen", []byte("secret")); err != nil {
		t.Fatalf("Save: %v", err)
	}
	info, err := os.Stat(state.Path(dir, "gen"))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Fatalf("state file mode = %o, want 600", mode)
	}
}

func TestFailedSaveKeepsPreviousState(t *testing.T) {
	tests := []struct {
		name string
		// failingSave saves "new state" for key "gen" in a way that fails
		// before the rename, and returns the error text.
		failingSave func(t *testing.T, dir string) string
		wantErr     string
	}{
		{
			name: "temporary file cannot be created",
			failingSave: func(t *testing.T, dir string) string {
				if err := os.Mkdir(state.Path(dir, "gen")+".tmp", 0o700); err != nil {
					t.Fatal(err)
				}
				err := state.Save(dir, "gen", []byte("new state"))
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := state.Save(dir, "gen", []byte("old state")); err != nil {
				t.Fatalf("first Save: %v", err)
			}
			msg := tt.failingSave(t, dir)
			if !strings.Contains(msg, "source_gen.state") || !strings.Contains(msg, tt.wantErr) {
				t.Fatalf("Save error = %q, want one naming the state file and %q", msg, tt.wantErr)
			}
			got, err := state.Load(dir, "gen")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if string(got) != "old state" {
				t.Fatalf("state after failed save = %q, want the old state intact", got)
			}
			assertNoTempFile(t, dir)
		})
	}
}

// saveInChildUnderFileSizeLimit re-runs the test binary as a child that
// saves under RLIMIT_FSIZE and returns the error it printed.
func saveInChildUnderFileSizeLimit(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child save process: %v\n%s", err, out)
	}
	return string(out)
}

func TestSaveIntoMissingDirectoryFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "absent")
	err := state.Save(dir, "gen", []byte("x"))
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "absent/source_gen.state") {
		t.Fatalf("Save error = %v, want a not-exist error naming the file", err)
	}
}

func TestConcurrentSavesLeaveOneWholeState(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	states := map[string]bool{}
	for i := range 16 {
		s := strings.Repeat(fmt.Sprint(i%10), 1000+i)
		states[s] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := state.Save(dir, "gen", []byte(s)); err != nil {
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

func BenchmarkSave(b *testing.B) {
	dir := b.TempDir()
	data := bytes.Repeat([]byte{0x91, 0x2a}, 32)
	for b.Loop() {
		if err := state.Save(dir, "gen", data); err != nil {
			b.Fatal(err)
		}
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func assertNoTempFile(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
}
