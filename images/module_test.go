package images_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// deploymentTools are the modules only these checks need. They are requirements of this module
// (images/go.mod), never of the root one: the binaries, and the images' `go mod download` of the
// root go.mod, must not fetch them.
var deploymentTools = []string{
	"helm.sh/", "k8s.io/", "sigs.k8s.io/", "github.com/moby/buildkit", "github.com/moby/patternmatcher",
	"github.com/compose-spec/", "github.com/hashicorp/hcl", "github.com/zclconf/go-cty", "golang.org/x/mod",
}

func TestRootModuleRequiresNoDeploymentTools(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		for _, tool := range deploymentTools {
			if strings.HasPrefix(r.Mod.Path, tool) {
				t.Errorf("the root go.mod requires %s %s: a deployment tool belongs to images/go.mod", r.Mod.Path, r.Mod.Version)
			}
		}
	}
}
