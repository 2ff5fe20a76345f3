package supervisor_test

import (
	"slices"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The supervisor knows runners only by their process contract (pkg/runnerproc, docs/architecture.md, decision 18): it
// never links the runner package.
func TestSupervisorDoesNotImportTheRunner(t *testing.T) {
	deps := testkit.PackageDeps(t, ".")
	if !slices.Contains(deps, "github.com/iggy-connectors-go/runtime/pkg/runnerproc") {
		t.Fatalf("the supervisor does not use pkg/runnerproc; deps: %v", deps)
	}
	if slices.Contains(deps, "github.com/iggy-connectors-go/runtime/runner") {
		t.Fatal("the supervisor imports the runner package; share the contract through pkg/runnerproc instead")
	}
}

// The supervisor checks plugin paths (pkg/pluginpath) but never loads a plugin: linking the
// plugin host would bring the dynamic loader (purego) and libc into its process, and their pages
// into its memory.
func TestSupervisorDoesNotLinkThePluginHost(t *testing.T) {
	deps := testkit.PackageDeps(t, ".")
	if !slices.Contains(deps, "github.com/iggy-connectors-go/runtime/pkg/pluginpath") {
		t.Fatalf("the supervisor does not use pkg/pluginpath; deps: %v", deps)
	}
	for _, dep := range []string{"github.com/iggy-connectors-go/runtime/pkg/plugin", "github.com/ebitengine/purego"} {
		if slices.Contains(deps, dep) {
			t.Fatalf("the supervisor links %s; check plugins with pkg/pluginpath instead", dep)
		}
	}
}
