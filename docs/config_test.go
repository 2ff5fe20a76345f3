package docs

import (
	"os"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/config"
	"github.com/iggy-connectors-go/runtime/runner"
	"github.com/iggy-connectors-go/runtime/supervisor"
)

// TestConfigListsEveryVariable checks that docs/config.md names every variable the runtime
// configuration, the runner and the supervisor read (the lists their --help prints), so a key
// added in code without a line in the docs fails here, naming it. Runtime variables may appear
// by their suffix, as in the table of §2.5 (`HTTP_ENABLED` for IGGY_CONNECTORS_HTTP_ENABLED).
func TestConfigListsEveryVariable(t *testing.T) {
	data, err := os.ReadFile("config.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	named := func(name string) bool { return strings.Contains(text, "`"+name+"`") }
	for _, v := range config.RuntimeEnvVars() {
		if !named(v.Name) && !named(strings.TrimPrefix(v.Name, config.EnvPrefix)) {
			t.Errorf("docs/config.md does not name the runtime variable %s (key %q, default %q)", v.Name, v.Key, v.Default)
		}
	}
	for _, list := range []struct {
		who  string
		vars []config.EnvVar
	}{{"runner", runner.RunnerEnvVars()}, {"supervisor", supervisor.SupervisorEnvVars()}} {
		for _, v := range list.vars {
			if !named(v.Name) {
				t.Errorf("docs/config.md does not name the %s variable %s (default %q)", list.who, v.Name, v.Default)
			}
		}
	}
}
