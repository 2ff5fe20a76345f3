package supervisor_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// createBody is a new sink version for plugin path.
func createBody(path string) string {
	b, _ := json.Marshal(path)
	return `{"enabled":true,"name":"out","path":` + string(b) + `,"streams":[{"stream":"demo","topics":["events"],"schema":"json"}],"plugin_config":{"a":1}}`
}

// refused checks a 400 invalid_configuration answer whose reason names every one of names.
func refused(t *testing.T, what string, resp *http.Response, body []byte, err error, names ...string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var e struct{ Code, Reason string }
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Code != "invalid_configuration" {
		t.Fatalf("%s: %d %s; want 400 invalid_configuration", what, resp.StatusCode, body)
	}
	for _, n := range names {
		if !strings.Contains(e.Reason, n) {
			t.Errorf("%s: reason %q does not name %q", what, e.Reason, n)
		}
	}
}

// The config API cannot make a runner load a library from outside the allowed directories
// (IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS here): a startup config naming one is not started; create
// refuses such a path, however it is disguised; activate and restart refuse a version whose
// plugin became unsafe since it was stored; the running connector is left alone.
func TestConfigAPIRefusesPluginsOutsideTheAllowList(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	root := t.TempDir()
	allowed, outside := filepath.Join(root, "allowed"), filepath.Join(root, "outside")
	testkit.CopyPlugin(t, "null_sink", filepath.Join(allowed, "libgood.so"))
	flip := testkit.CopyPlugin(t, "null_sink", filepath.Join(allowed, "libflip.so"))
	evil := testkit.CopyPlugin(t, "null_sink", filepath.Join(outside, "libevil.so"))
	if err := os.Symlink(evil, filepath.Join(allowed, "libescape.so")); err != nil {
		t.Fatal(err)
	}
	f.writeRuntime(t, `api_key = "`+apiKey+`"`)
	f.write(t, "connectors/out.toml", sinkFile("out", filepath.Join(allowed, "libgood"), "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	f.write(t, "connectors/stray.toml", sinkFile("stray", evil, "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	p := testkit.StartSupervisor(t, f.dir, f.env("IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS="+allowed), waitLong)
	waitFor(t, p, waitLong, "out running", func() bool { return statsOf(t, p, withKey())["sink/out"].Status == "running" })
	// A startup config naming a plugin outside the list is not started; its neighbour is.
	if st := statsOf(t, p, withKey())["sink/stray"]; st.Status != "error" || st.LastError == nil ||
		!strings.Contains(st.LastError.Message, "outside every allowed directory") || st.PID != 0 {
		t.Fatalf("a startup connector with a plugin outside the list: %+v", st)
	}

	for _, c := range []struct{ name, path string }{
		{"a library outside", evil},
		{"traversal with ..", filepath.Join(allowed, "..", "outside", "libevil")},
		{"a symlink pointing outside", filepath.Join(allowed, "libescape.so")},
	} {
		resp, body, err := p.Do("POST", "/sinks/out/configs", jsonHeader(), createBody(c.path))
		refused(t, "create with "+c.name, resp, body, err, "outside every allowed directory", allowed, "plugins.allowed_dirs")
	}
	resp, body, err := p.Do("POST", "/sinks/out/configs", jsonHeader(), createBody(flip))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create with an allowed plugin: %v %v %s", resp, err, body)
	}

	// The stored version's plugin becomes world-writable: activating it is refused.
	if err := os.Chmod(flip, 0o666); err != nil {
		t.Fatal(err)
	}
	resp, body, err = p.Do("PUT", "/sinks/out/configs/active", jsonHeader(), `{"version":1}`)
	refused(t, "activate", resp, body, err, flip, "world-writable", allowed)
	if err := os.Chmod(flip, 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, body, err := p.Do("PUT", "/sinks/out/configs/active", jsonHeader(), `{"version":1}`); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("activate a safe version: %v %v %s", resp, err, body)
	}
	// ... and once active, it turns unsafe again before the restart.
	if err := os.Chmod(flip, 0o666); err != nil {
		t.Fatal(err)
	}
	resp, body, err = p.Do("POST", "/sinks/out/restart", withKey(), "")
	refused(t, "restart", resp, body, err, flip, "world-writable", allowed)
	if st := statsOf(t, p, withKey())["sink/out"]; st.Status != "running" {
		t.Fatalf("the running connector after a refused restart: %+v", st)
	}
}

// Without plugins.allowed_dirs the allowed directories are those of the plugins the startup
// configs name and plugins/ next to the supervisor's binary: another plugin of the same directory
// is accepted, a library anywhere else refused with the list in the answer.
func TestConfigAPIDefaultAllowList(t *testing.T) {
	broker := testkit.StartBroker(t, testkit.WithStream("demo", map[string]uint32{"events": 1}))
	f := newFixture(t, broker)
	f.writeRuntime(t, `api_key = "`+apiKey+`"`)
	f.write(t, "connectors/out.toml", sinkFile("out", f.plugin("null_sink"), "demo", "events", "")+"\n[plugin_config]\na = 1\n")
	p := testkit.StartSupervisor(t, f.dir, f.env(), waitLong)

	if resp, body, err := p.Do("POST", "/sinks/out/configs", jsonHeader(), createBody(f.plugin("fault"))); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("create with another plugin of the startup config's directory: %v %v %s", resp, err, body)
	}
	elsewhere := testkit.CopyPlugin(t, "null_sink", filepath.Join(t.TempDir(), "libcopy.so"))
	binPlugins := filepath.Join(filepath.Dir(testkit.SupervisorBinary(t)), "plugins")
	resp, body, err := p.Do("POST", "/sinks/out/configs", jsonHeader(), createBody(elsewhere))
	refused(t, "create with a library elsewhere", resp, body, err, elsewhere, f.plugins, binPlugins)
}
