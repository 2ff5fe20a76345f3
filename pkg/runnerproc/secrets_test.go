package runnerproc_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/runnerproc"
)

// The secrets file round-trips any value (an "=" or a line break included), wins over the
// environment, is removed once read, and a bad one is an error naming the variable.
func TestMergeSecrets(t *testing.T) {
	doc, err := runnerproc.EncodeSecrets([]string{"IGGY_CONNECTORS_IGGY_PASSWORD=p=w\nx", "IGGY_CONNECTORS_IGGY_TOKEN=t"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := runnerproc.MergeSecrets([]string{"A=1", "IGGY_CONNECTORS_IGGY_TOKEN=old", runnerproc.EnvSecretsPath + "=" + path})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A=1", "IGGY_CONNECTORS_IGGY_TOKEN=old", "IGGY_CONNECTORS_IGGY_PASSWORD=p=w\nx", "IGGY_CONNECTORS_IGGY_TOKEN=t"}
	if !slices.Equal(got, want) {
		t.Fatalf("MergeSecrets = %q, want %q", got, want)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the secrets file is still there: %v", err)
	}
	if same, err := runnerproc.MergeSecrets([]string{"A=1"}); err != nil || !slices.Equal(same, []string{"A=1"}) {
		t.Fatalf("without the variable: %q, %v", same, err)
	}
	for _, content := range []string{"", "not json"} {
		bad := filepath.Join(t.TempDir(), "bad.json")
		_ = os.WriteFile(bad, []byte(content), 0o600)
		if _, err := runnerproc.MergeSecrets([]string{runnerproc.EnvSecretsPath + "=" + bad}); err == nil || !strings.Contains(err.Error(), runnerproc.EnvSecretsPath) {
			t.Errorf("content %q: %v, want an error naming %s", content, err, runnerproc.EnvSecretsPath)
		}
	}
	if _, err := runnerproc.MergeSecrets([]string{runnerproc.EnvSecretsPath + "=/nonexistent/s.json"}); err == nil || !strings.Contains(err.Error(), runnerproc.EnvSecretsPath) {
		t.Errorf("missing file: %v", err)
	}
}
