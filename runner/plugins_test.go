package runner_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// A standalone runner checks its plugin against IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS, or by
// default against its own plugin's directory and plugins/ next to the binary: a refused plugin is
// bad configuration (exit 2, one line naming the path and the allowed directories); an allowed one
// runs.
func TestRunnerPluginAllowList(t *testing.T) {
	srv := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	root := t.TempDir()
	plugin := testkit.CopyPlugin(t, "null_sink", filepath.Join(root, "mine", "libnull.so"))
	writable := testkit.CopyPlugin(t, "null_sink", filepath.Join(root, "shared", "libnull.so"))
	if err := os.Chmod(writable, 0o666); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(root, "other")
	if err := os.Mkdir(other, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, plugin, allowed string
		refusal               []string // nil: the runner must run
	}{
		{name: "default: its own plugin's directory", plugin: plugin},
		{name: "variable naming the plugin's directory", plugin: plugin, allowed: other + "," + filepath.Dir(plugin)},
		{name: "variable naming another directory", plugin: plugin, allowed: other,
			refusal: []string{"plugin '" + plugin + "' refused", "outside every allowed directory", "allowed plugin directories: " + other}},
		{name: "traversal out of the allowed directory", plugin: filepath.Join(other, "..", "mine", "libnull.so"), allowed: other,
			refusal: []string{"resolves to '" + plugin + "'", other}},
		{name: "default: a world-writable plugin", plugin: writable,
			refusal: []string{writable, "world-writable", filepath.Dir(writable)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := withConfig(baseEnv(srv, t.TempDir()), sinkTOML("guarded", c.plugin, "demo", "events", "", "a = 1"))
			if c.allowed != "" {
				env = append(env, "IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS="+c.allowed)
			}
			p := testkit.StartRunner(t, env)
			if c.refusal == nil {
				p.WaitStatus(t, "running", waitLong)
				return
			}
			expectExit(t, p, 2, "invalid configuration")
			var line string
			for l := range strings.SplitSeq(p.Logs(), "\n") {
				if strings.Contains(l, "invalid configuration") {
					line = l
				}
			}
			for _, want := range c.refusal {
				if !strings.Contains(line, want) {
					t.Errorf("the refusal line does not name %q:\n%s", want, line)
				}
			}
		})
	}
}
