package pluginpath

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A file owned by another user (neither root nor the one running) could have been written by
// them. As root the test gives a file to another uid; as anyone else it checks its own file as if
// another user were running (only root can give files away).
func TestAllowListRefusesForeignOwner(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "libforeign.so")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	list := NewAllowList([]string{dir})
	if _, err := list.Check(file); err != nil {
		t.Fatalf("a file of the running user: %v", err)
	}
	owner, self := os.Getuid(), os.Getuid()+1
	if os.Getuid() == 0 {
		owner, self = 12345, 0
		if err := os.Chown(file, owner, owner); err != nil {
			t.Fatal(err)
		}
	}
	_, err := list.check(file, self)
	want := fmt.Sprintf("owned by uid %d, neither root nor the running user (uid %d)", owner, self)
	if !errors.Is(err, ErrNotAllowed) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), file) {
		t.Fatalf("check of a foreign file = %v; want a refusal naming the file and %q", err, want)
	}
}
