package testkit

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzCorpus reads a stored Go fuzz corpus directory whose files hold one []byte each
// ("go test fuzz v1" format), so one target's corpus can seed another target.
func FuzzCorpus(tb testing.TB, dir string) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("fuzz corpus %s: %v (%d files)", dir, err, len(files))
	}
	var out [][]byte
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			tb.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 2 || lines[0] != "go test fuzz v1" || !strings.HasPrefix(lines[1], "[]byte(") {
			tb.Fatalf("%s: not a go test fuzz v1 file of one []byte", name)
		}
		s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(lines[1], "[]byte("), ")"))
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		out = append(out, []byte(s))
	}
	return out
}
