package supervisor_test

import (
	"crypto/tls"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/testkit"
)

// How the runtime configuration is found and layered at startup (docs/config.md §1-2), seen from the
// outside: what the process does with each layout.
func TestStartupConfiguration(t *testing.T) {
	broker := testkit.StartBroker(t)
	cases := []struct {
		name  string
		files map[string]string
		env   []string
		// starts: the API comes up; else the process exits 1 with wantLog in its output.
		starts  bool
		wantLog []string
		check   func(t *testing.T, p *testkit.SupervisorProc)
	}{
		{
			name:    "missing file: defaults plus environment",
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=nowhere.toml", "IGGY_CONNECTORS_CONNECTORS_CONFIG_DIR=connectors"},
			starts:  true,
			wantLog: []string{`runtime config file \"nowhere.toml\" not found`},
		},
		{
			name:    "missing file and no config_dir",
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=nowhere.toml"},
			wantLog: []string{"Connectors configuration directory not provided"},
		},
		{
			name:    "bad TOML names the key",
			files:   map[string]string{"config.toml": "[http]\nenabled = \"yes\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"},
			wantLog: []string{"Failed to load configuration", "http.enabled"},
		},
		{
			name:    "bad connector file is reported naming file and key; the runtime starts",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n", "connectors/x.toml": "type = \"sink\"\nkey = \"x\"\nstreams = 3\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"},
			starts:  true,
			wantLog: []string{"connector config does not load", "connector=sink/x", "x.toml"},
		},
		{
			name:    "runner binary not found",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_SUPERVISOR_RUNNER_PATH=/nonexistent/iggy-connector-runner"},
			wantLog: []string{"IGGY_SUPERVISOR_RUNNER_PATH", "binary not found"},
		},
		{
			name:    "bad supervisor variable",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_SUPERVISOR_DRAIN_TIMEOUT=soon"},
			wantLog: []string{"IGGY_SUPERVISOR_DRAIN_TIMEOUT"},
		},
		{
			name:    "unknown variable is warned about with a suggestion",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_CONNECTORS_HTTP_API_KYE=x"},
			starts:  true,
			wantLog: []string{"IGGY_CONNECTORS_HTTP_API_KYE", "IGGY_CONNECTORS_HTTP_API_KEY"},
		},
		{
			name:    "bad telemetry endpoint names the key",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n[telemetry]\nenabled = true\n[telemetry.logs]\nendpoint = \"collector:4317\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"},
			wantLog: []string{"cannot set up telemetry", "telemetry.logs.endpoint", "collector:4317"},
		},
		{
			name:    "bad logging format names the key",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n[logging]\nformat = \"JSON\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"},
			wantLog: []string{"logging.format"},
		},
		{
			name:    "unparsable RUST_LOG falls back to info with a warning",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "RUST_LOG=iggy_connectors=loud"},
			starts:  true,
			wantLog: []string{"log filter ignored", "iggy_connectors=loud", "iggy-connectors started"},
		},
		{
			name:    "a fleet.ca_file that does not load stops startup naming the key and the file",
			env:     []string{"IGGY_CONNECTORS_FLEET_ENABLED=true", "IGGY_CONNECTORS_FLEET_RUNNERS=127.0.0.1:1", "IGGY_CONNECTORS_FLEET_SCHEME=https", "IGGY_CONNECTORS_FLEET_CA_FILE=no-such-ca.pem"},
			wantLog: []string{"fleet.ca_file", "no-such-ca.pem"},
		},
		{
			name:    "any CORS origin beyond loopback without a key is refused naming the keys",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n[http.cors]\nenabled = true\nallowed_origins = [\"*\"]\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_CONNECTORS_HTTP_ADDRESS=0.0.0.0:0"},
			wantLog: []string{`http.cors.allowed_origins = [\"*\"]`, "http.cors.enabled", "http.api_key"},
		},
		{
			name:    "any CORS origin on loopback starts with a warning naming the effect",
			files:   map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n[http.cors]\nenabled = true\nallowed_origins = [\"*\"]\n"},
			env:     []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml"},
			starts:  true,
			wantLog: []string{"WARN", "the Origin check is off", "any web page"},
		},
		{
			name: "dotenv file supplies the API key; the process environment wins over it",
			files: map[string]string{"config.toml": "[connectors]\nconfig_dir = \"connectors\"\n",
				"settings.env": "IGGY_CONNECTORS_HTTP_API_KEY=from-dotenv\nIGGY_CONNECTORS_STATE_PATH=from-dotenv\n"},
			env:    []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_CONNECTORS_ENV_PATH=settings.env", "IGGY_CONNECTORS_STATE_PATH=from-env"},
			starts: true,
			check: func(t *testing.T, p *testkit.SupervisorProc) {
				for key, want := range map[string]int{"": 401, "from-dotenv": 200} {
					resp, _, err := p.Do("GET", "/stats", http.Header{"Api-Key": {key}}, "")
					if err != nil || resp.StatusCode != want {
						t.Errorf("GET /stats with api-key %q: %v %v, want %d", key, resp.StatusCode, err, want)
					}
				}
				if _, err := os.Stat(filepath.Join(p.Cmd.Dir, "from-env")); err != nil {
					t.Errorf("state directory from the environment not created: %v", err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range c.files {
				path := filepath.Join(dir, name)
				_ = os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := append([]string{"IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr()}, c.env...)
			var p *testkit.SupervisorProc
			if c.starts {
				p = testkit.StartSupervisor(t, dir, env, waitLong)
			} else {
				p = testkit.StartSupervisorNoWait(t, dir, env)
				if code, err := p.Wait(waitLong); err != nil || code != 1 {
					t.Fatalf("exit code %d, %v; want 1", code, err)
				}
			}
			// Lines logged after the API listens ("iggy-connectors started") may still be on
			// their way when StartSupervisor returns.
			for _, w := range c.wantLog {
				if !testkit.Within(waitLong, func() bool { return strings.Contains(p.Logs(), w) }) {
					t.Errorf("output lacks %q:\n%s", w, p.Logs())
				}
			}
			if c.check != nil {
				c.check(t, p)
			}
		})
	}
}

// With http.tls enabled the API speaks HTTPS only, with the configured certificate.
func TestAPIOverTLS(t *testing.T) {
	broker := testkit.StartBroker(t)
	dir := t.TempDir()
	// WriteTLSCert names its files cert.pem and key.pem: the config below finds them relative to itself.
	cert := testkit.WriteTLSCert(t, dir, "127.0.0.1")
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(`[http.tls]
enabled = true
cert_file = "cert.pem"
key_file = "key.pem"

[connectors]
config_dir = "connectors"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := testkit.StartSupervisor(t, dir, []string{"IGGY_CONNECTORS_CONFIG_PATH=config.toml", "IGGY_CONNECTORS_IGGY_ADDRESS=" + broker.Addr()}, waitLong)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.CAPool}}}
	resp, err := client.Get("https://" + p.Addr + "/health")
	if err != nil {
		t.Fatalf("HTTPS GET /health: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HTTPS /health: %d", resp.StatusCode)
	}
	if resp, err := (&http.Client{Timeout: 10 * time.Second}).Get("http://" + p.Addr + "/health"); err == nil && resp.StatusCode == 200 {
		t.Errorf("plain HTTP answered 200 on the TLS listener")
	}
}
