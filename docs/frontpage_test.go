package docs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README is the front page: the two commands a newcomer needs and the console come first,
// and it stays short; everything else lives in docs/ (whose README.md indexes every document).
func TestReadmeIsAFrontPage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	first := strings.Join(lines[:min(40, len(lines))], "\n")
	for _, want := range []string{"make run", "make test", "docs/console.md"} {
		if !strings.Contains(first, want) {
			t.Errorf("README.md: %q is not in its first 40 lines", want)
		}
	}
	if len(lines) > 250 {
		t.Errorf("README.md has %d lines; a front page stays near 200: move the detail into docs/", len(lines))
	}
}

func TestDocsIndexListsEveryDocument(t *testing.T) {
	index, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if f != "README.md" && !strings.Contains(string(index), "("+f+")") {
			t.Errorf("docs/README.md does not link %s", f)
		}
	}
}
