package supervisor_test

import (
	"slices"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// The supervisor knows runners only by their process contract (pkg/runnerproc, decision 18): it
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
