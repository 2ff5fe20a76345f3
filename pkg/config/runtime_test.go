package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadRuntimeUpstreamExampleFile(t *testing.T) {
	r, err := config.LoadRuntime("testdata/upstream/config.toml", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config.DefaultRuntime()
	want.Connectors.ConfigDir = "connectors"
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("upstream example config:\n got %+v\nwant %+v", r, want)
	}
}

func TestLoadRuntimeLayersFileOverDefaults(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), `
[http]
address = "0.0.0.0:9000"
read_timeout = "7s"
max_connections = 9
[http.cors]
allowed_origins = ["https://a.example"]
[iggy]
token = "pat"
[connectors]
config_type = "http"
base_url = "http://cfg:9000/api"
timeout = "1m 30s"
[connectors.request_headers]
authorization = "Bearer x"
[connectors.url_templates]
get_active_configs = "/runtimes/edge-1/active"
[connectors.response]
data_path = "result.payload"
[connectors.retry]
enabled = false
max_attempts = 7
unknown_key = "ignored"
[telemetry.traces]
transport = "http"
[logging]
format = "json"
[some_future_section]
x = 1
[plugins]
allowed_dirs = ["/opt/iggy/connectors"]
`)
	r, err := config.LoadRuntime(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config.DefaultRuntime()
	want.HTTP.Address = "0.0.0.0:9000"
	want.HTTP.CORS.AllowedOrigins = []string{"https://a.example"}
	want.HTTP.Limits.ReadTimeout, want.HTTP.Limits.MaxConnections = 7*time.Second, 9
	want.Iggy.Token = "pat"
	want.Connectors.ConfigType = "http"
	want.Connectors.BaseURL = "http://cfg:9000/api"
	want.Connectors.Timeout = 90 * time.Second
	want.Connectors.RequestHeaders = map[string]string{"authorization": "Bearer x"}
	want.Connectors.URLTemplates = map[string]string{"get_active_configs": "/runtimes/edge-1/active"}
	want.Connectors.Response.DataPath = "result.payload"
	want.Connectors.Retry.Enabled = false
	want.Connectors.Retry.MaxAttempts = 7
	want.Telemetry.Traces.Transport = "http"
	want.Logging.Format = "json"
	want.Plugins.AllowedDirs = []string{"/opt/iggy/connectors"}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("layered config:\n got %+v\nwant %+v", r, want)
	}
}

func TestLoadRuntimeEnvOverrides(t *testing.T) {
	tests := []struct {
		name  string
		env   []string
		check func(r config.Runtime) bool
	}{
		{"username", []string{"IGGY_CONNECTORS_IGGY_USERNAME=admin"}, func(r config.Runtime) bool { return r.Iggy.Username == "admin" }},
		{"tls enabled", []string{"IGGY_CONNECTORS_IGGY_TLS_ENABLED=true"}, func(r config.Runtime) bool { return r.Iggy.TLS.Enabled }},
		{"tls domain", []string{"IGGY_CONNECTORS_IGGY_TLS_DOMAIN=iggy.internal"}, func(r config.Runtime) bool { return r.Iggy.TLS.Domain == "iggy.internal" }},
		{"bool any case", []string{"IGGY_CONNECTORS_HTTP_CORS_ENABLED=TRUE"}, func(r config.Runtime) bool { return r.HTTP.CORS.Enabled }},
		{"bracket list", []string{`IGGY_CONNECTORS_HTTP_CORS_ALLOWED_ORIGINS=[https://a.example, "https://b.example"]`},
			func(r config.Runtime) bool {
				return slices.Equal(r.HTTP.CORS.AllowedOrigins, []string{"https://a.example", "https://b.example"})
			}},
		{"empty list", []string{"IGGY_CONNECTORS_HTTP_CORS_ALLOWED_ORIGINS=[]"}, func(r config.Runtime) bool { return len(r.HTTP.CORS.AllowedOrigins) == 0 }},
		{"empty value ignored", []string{"IGGY_CONNECTORS_HTTP_ADDRESS="}, func(r config.Runtime) bool { return r.HTTP.Address == "127.0.0.1:8081" }},
		{"switch to http provider", []string{"IGGY_CONNECTORS_CONNECTORS_CONFIG_TYPE=http", "IGGY_CONNECTORS_CONNECTORS_BASE_URL=http://cfg:9000/api"},
			func(r config.Runtime) bool {
				return r.Connectors.ConfigType == "http" && r.Connectors.BaseURL == "http://cfg:9000/api"
			}},
		{"duration", []string{"IGGY_CONNECTORS_CONNECTORS_TIMEOUT=30s"}, func(r config.Runtime) bool { return r.Connectors.Timeout == 30*time.Second }},
		{"duration with space", []string{"IGGY_CONNECTORS_CONNECTORS_RETRY_INITIAL_BACKOFF=500 ms"},
			func(r config.Runtime) bool { return r.Connectors.Retry.InitialBackoff == 500*time.Millisecond }},
		{"numeric password stays text", []string{"IGGY_CONNECTORS_IGGY_PASSWORD=123456"}, func(r config.Runtime) bool { return r.Iggy.Password == "123456" }},
		{"partial retry table", []string{"IGGY_CONNECTORS_CONNECTORS_RETRY_ENABLED=false"},
			func(r config.Runtime) bool { return !r.Connectors.Retry.Enabled && r.Connectors.Retry.MaxAttempts == 3 }},
		{"logging format", []string{"IGGY_CONNECTORS_LOGGING_FORMAT=json"}, func(r config.Runtime) bool { return r.Logging.Format == "json" }},
		{"later entry wins", []string{"IGGY_CONNECTORS_STATE_PATH=a", "IGGY_CONNECTORS_STATE_PATH=b"}, func(r config.Runtime) bool { return r.State.Path == "b" }},
		{"state backend iggy", []string{"IGGY_CONNECTORS_STATE_BACKEND=iggy", "IGGY_CONNECTORS_STATE_STREAM=offsets"},
			func(r config.Runtime) bool {
				return r.State.Backend == config.StateBackendIggy && r.State.Stream == "offsets"
			}},
		{"iggy protocol defaults to auto", nil, func(r config.Runtime) bool { return r.Iggy.Protocol == config.IggyProtocolAuto }},
		{"iggy protocol from env", []string{"IGGY_CONNECTORS_IGGY_PROTOCOL=0.9"}, func(r config.Runtime) bool { return r.Iggy.Protocol == config.IggyProtocol09 }},
		{"iggy request timeout defaults to 30s", nil, func(r config.Runtime) bool { return r.Iggy.RequestTimeout == 30*time.Second }},
		{"iggy request timeout from env", []string{"IGGY_CONNECTORS_IGGY_REQUEST_TIMEOUT=5s"}, func(r config.Runtime) bool { return r.Iggy.RequestTimeout == 5*time.Second }},
		{"state backend defaults", nil, func(r config.Runtime) bool {
			return r.State.Backend == config.StateBackendFile && r.State.Stream == "connector_state"
		}},
		{"map extension", []string{`IGGY_CONNECTORS_CONNECTORS_REQUEST_HEADERS={"authorization":"Bearer y"}`},
			func(r config.Runtime) bool { return r.Connectors.RequestHeaders["authorization"] == "Bearer y" }},
		{"name is case-sensitive", []string{"iggy_connectors_iggy_username=admin"}, func(r config.Runtime) bool { return r.Iggy.Username == "iggy" }},
		{"http limits", []string{"IGGY_CONNECTORS_HTTP_READ_TIMEOUT=5s", "IGGY_CONNECTORS_HTTP_WRITE_TIMEOUT=0", "IGGY_CONNECTORS_HTTP_IDLE_TIMEOUT=2m",
			"IGGY_CONNECTORS_HTTP_MAX_BODY_BYTES=4096", "IGGY_CONNECTORS_HTTP_MAX_CONNECTIONS=8", "IGGY_CONNECTORS_HTTP_MIN_BODY_RATE=2048"},
			func(r config.Runtime) bool {
				return r.HTTP.Limits == config.HTTPLimits{ReadTimeout: 5 * time.Second, IdleTimeout: 2 * time.Minute, MaxBodyBytes: 4096, MaxConnections: 8, MaxConnectionsPerClient: 64, MinBodyRate: 2048}
			}},
		{"console on by default", nil, func(r config.Runtime) bool { return r.HTTP.UI.Enabled }},
		{"console off", []string{"IGGY_CONNECTORS_HTTP_UI_ENABLED=false"}, func(r config.Runtime) bool { return !r.HTTP.UI.Enabled }},
		{"plugin dirs comma-separated", []string{"IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS=/opt/a, /opt/b,,"},
			func(r config.Runtime) bool { return slices.Equal(r.Plugins.AllowedDirs, []string{"/opt/a", "/opt/b"}) }},
		{"plugin dirs as a bracket list", []string{`IGGY_CONNECTORS_PLUGINS_ALLOWED_DIRS=["/opt/a", "/opt/b"]`},
			func(r config.Runtime) bool { return slices.Equal(r.Plugins.AllowedDirs, []string{"/opt/a", "/opt/b"}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := config.LoadRuntime("", tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(r) {
				t.Fatalf("env %v not applied as expected: %+v", tt.env, r)
			}
		})
	}
}

func TestLoadRuntimeConsoleSwitch(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "[http.ui]\nenabled = false\n")
	r, err := config.LoadRuntime(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.HTTP.UI.Enabled {
		t.Fatal("[http.ui] enabled = false left the console on")
	}
	if r, err = config.LoadRuntime(path, []string{"IGGY_CONNECTORS_HTTP_UI_ENABLED=true"}); err != nil || !r.HTTP.UI.Enabled {
		t.Fatalf("IGGY_CONNECTORS_HTTP_UI_ENABLED=true over the file: enabled %v, error %v", r.HTTP.UI.Enabled, err)
	}
}

func TestLoadRuntimeEnvBeatsFile(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "config.toml"), "[state]\npath = \"from_file\"\n")
	r, err := config.LoadRuntime(path, []string{"IGGY_CONNECTORS_STATE_PATH=from_env"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State.Path != "from_env" {
		t.Fatalf("state.path = %q, want the variable's value", r.State.Path)
	}
}

func TestLoadRuntimeRejects(t *testing.T) {
	tests := []struct {
		name      string
		file      string
		env       []string
		wantInErr []string
	}{
		{"bad TOML", "[http\nenabled = true", nil, []string{"config.toml", "TOML"}},
		{"wrong type", "[http]\nenabled = \"yes\"", nil, []string{"config.toml", "http.enabled", "bool"}},
		{"table expected", "http = 5", nil, []string{"key http", "table"}},
		{"unknown enum", "[connectors]\nconfig_type = \"LOCAL\"", nil, []string{"connectors.config_type", "LOCAL"}},
		{"integer duration", "[connectors]\ntimeout = 30", nil, []string{"connectors.timeout", "unit"}},
		{"duration without unit", "[connectors]\ntimeout = \"30\"", nil, []string{"connectors.timeout", "unit"}},
		{"uppercase log format", "", []string{"IGGY_CONNECTORS_LOGGING_FORMAT=JSON"}, []string{"IGGY_CONNECTORS_LOGGING_FORMAT", "JSON"}},
		{"bool from env", "", []string{"IGGY_CONNECTORS_HTTP_ENABLED=yes"}, []string{"IGGY_CONNECTORS_HTTP_ENABLED", "true or false"}},
		{"list without brackets", "", []string{"IGGY_CONNECTORS_HTTP_CORS_ALLOWED_ORIGINS=https://a.example"}, []string{"IGGY_CONNECTORS_HTTP_CORS_ALLOWED_ORIGINS", "bracket"}},
		{"u32 out of range", "", []string{"IGGY_CONNECTORS_CONNECTORS_RETRY_MAX_ATTEMPTS=-1"}, []string{"IGGY_CONNECTORS_CONNECTORS_RETRY_MAX_ATTEMPTS"}},
		{"http without base_url", "[connectors]\nconfig_type = \"http\"", nil, []string{"connectors.base_url"}},
		{"backoff order", "[connectors]\nconfig_type = \"http\"\nbase_url = \"http://x\"\n[connectors.retry]\ninitial_backoff = \"1m\"\nmax_backoff = \"1s\"", nil, []string{"connectors.retry.initial_backoff"}},
		{"bad header name", "[connectors]\nconfig_type = \"http\"\nbase_url = \"http://x\"\n[connectors.request_headers]\n\"bad header\" = \"v\"", nil, []string{"Invalid header name 'bad header'"}},
		{"missing credentials", "[iggy]\nusername = \"\"", nil, []string{"Missing Iggy credentials"}},
		{"tls without ca", "[iggy.tls]\nenabled = true\nca_file = \"\"", nil, []string{"iggy.tls.ca_file"}},
		{"bad cors method", "[http.cors]\nallowed_methods = [\"FETCH\"]", nil, []string{"http.cors.allowed_methods", "FETCH"}},
		{"unknown state backend", "[state]\nbackend = \"s3\"", nil, []string{"state.backend", "s3", "file, iggy"}},
		{"unknown iggy protocol", "[iggy]\nprotocol = \"0.7\"", nil, []string{"iggy.protocol", "0.7", "auto, 0.8, 0.9"}},
		{"iggy protocol from env", "", []string{"IGGY_CONNECTORS_IGGY_PROTOCOL=1.0"}, []string{"IGGY_CONNECTORS_IGGY_PROTOCOL", "1.0"}},
		{"zero iggy request timeout", "[iggy]\nrequest_timeout = \"0s\"", nil, []string{"iggy.request_timeout", "above 0"}},
		{"state backend from env", "", []string{"IGGY_CONNECTORS_STATE_BACKEND=Iggy"}, []string{"IGGY_CONNECTORS_STATE_BACKEND", "Iggy"}},
		{"iggy backend without stream", "[state]\nbackend = \"iggy\"\nstream = \"\"", nil, []string{"state.stream", "iggy"}},
		{"array of non-strings", "[http.cors]\nallowed_origins = [1]", nil, []string{"http.cors.allowed_origins", "element 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ""
			if tt.file != "" {
				path = writeFile(t, filepath.Join(t.TempDir(), "config.toml"), tt.file)
			}
			_, err := config.LoadRuntime(path, tt.env)
			if !errors.Is(err, config.ErrInvalidRuntime) {
				t.Fatalf("error = %v, want ErrInvalidRuntime", err)
			}
			for _, part := range tt.wantInErr {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not mention %q", err, part)
				}
			}
		})
	}
}

func TestLoadRuntimeMissingFileIsAnError(t *testing.T) {
	_, err := config.LoadRuntime(filepath.Join(t.TempDir(), "absent.toml"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error = %v, want ErrNotExist", err)
	}
}

// every value differs from the defaults, so a lost field shows up.
func nonDefaultRuntime() config.Runtime {
	r := config.DefaultRuntime()
	r.HTTP = config.HTTP{Enabled: false, Address: "unix:/tmp/sock", APIKey: "k3y,with=signs",
		CORS: config.CORS{Enabled: true, AllowedMethods: []string{"GET"}, AllowedOrigins: []string{},
			AllowedHeaders: []string{"a", "b c"}, ExposedHeaders: []string{"x-y"}, AllowCredentials: true, AllowPrivateNetwork: true},
		Metrics:    config.HTTPMetrics{Enabled: true, Endpoint: "/m", Public: true},
		TLS:        config.HTTPTLS{Enabled: true, CertFile: "c.pem", KeyFile: "k.pem"},
		SecretKeys: []string{"dsn", "pass"}, RevealSecrets: true,
		Limits:               config.HTTPLimits{ReadTimeout: time.Second, WriteTimeout: 0, IdleTimeout: time.Minute, MaxBodyBytes: 10, MaxConnections: 3, MaxConnectionsPerClient: 2},
		AllowUnauthenticated: true, AllowedHosts: []string{"a.example", ".svc.cluster.local"}}
	r.Plugins.AllowedDirs = []string{"/opt/plugins", "relative/dir"}
	r.Iggy = config.Iggy{Address: "iggy:8090", Username: "u", Password: "123", Token: "file:~/pat",
		TLS: config.IggyTLS{Enabled: true, CAFile: "ca.pem", Domain: "iggy.internal"}, Protocol: config.IggyProtocol09,
		RequestTimeout: 45 * time.Second}
	r.State.Path = "/var/lib/state"
	r.Connectors = config.Connectors{ConfigType: "http", ConfigDir: "dir", BaseURL: "http://cfg/api", Timeout: 1500 * time.Millisecond,
		RequestHeaders: map[string]string{"authorization": "Bearer x"},
		URLTemplates:   map[string]string{"get_active_configs": "/a?b=c"},
		Response:       config.ResponsePaths{DataPath: "data", ErrorPath: "error.message"},
		Retry:          config.Retry{Enabled: false, MaxAttempts: 9, InitialBackoff: 250 * time.Millisecond, MaxBackoff: 8 * time.Second, BackoffMultiplier: 3}}
	r.Telemetry = config.Telemetry{Enabled: true, ServiceName: "svc",
		Logs: config.OTLPExporter{Transport: "http", Endpoint: "http://otel:4318"}, Traces: config.OTLPExporter{Transport: "http", Endpoint: "http://otel:4318/t"}}
	r.Logging.Format = "json"
	return r
}

func TestEnvironRoundTrip(t *testing.T) {
	for name, r := range map[string]config.Runtime{"defaults": config.DefaultRuntime(), "every key changed": nonDefaultRuntime()} {
		t.Run(name, func(t *testing.T) {
			got, err := config.LoadRuntime("", r.Environ())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, r) {
				t.Fatalf("LoadRuntime(Environ()):\n got %+v\nwant %+v", got, r)
			}
		})
	}
}

// The spec's closed list of runtime variables (docs/config.md §2.5).
var specRuntimeVarSuffixes = strings.Fields(`HTTP_ENABLED HTTP_ADDRESS HTTP_API_KEY HTTP_CORS_ENABLED
HTTP_CORS_ALLOWED_METHODS HTTP_CORS_ALLOWED_ORIGINS HTTP_CORS_ALLOWED_HEADERS HTTP_CORS_EXPOSED_HEADERS
HTTP_CORS_ALLOW_CREDENTIALS HTTP_CORS_ALLOW_PRIVATE_NETWORK HTTP_TLS_ENABLED HTTP_TLS_CERT_FILE HTTP_TLS_KEY_FILE
HTTP_METRICS_ENABLED HTTP_METRICS_ENDPOINT IGGY_ADDRESS IGGY_USERNAME IGGY_PASSWORD IGGY_TOKEN IGGY_TLS_ENABLED
IGGY_TLS_CA_FILE IGGY_TLS_DOMAIN CONNECTORS_CONFIG_TYPE CONNECTORS_CONFIG_DIR CONNECTORS_BASE_URL CONNECTORS_TIMEOUT
CONNECTORS_RESPONSE_DATA_PATH CONNECTORS_RESPONSE_ERROR_PATH CONNECTORS_RETRY_ENABLED CONNECTORS_RETRY_MAX_ATTEMPTS
CONNECTORS_RETRY_INITIAL_BACKOFF CONNECTORS_RETRY_MAX_BACKOFF CONNECTORS_RETRY_BACKOFF_MULTIPLIER STATE_PATH
TELEMETRY_ENABLED TELEMETRY_SERVICE_NAME TELEMETRY_LOGS_TRANSPORT TELEMETRY_LOGS_ENDPOINT TELEMETRY_TRACES_TRANSPORT
TELEMETRY_TRACES_ENDPOINT LOGGING_FORMAT`)

func TestRuntimeEnvVarsCoverTheSpecList(t *testing.T) {
	byName := map[string]config.EnvVar{}
	for _, v := range config.RuntimeEnvVars() {
		byName[v.Name] = v
	}
	for _, suffix := range specRuntimeVarSuffixes {
		v, ok := byName["IGGY_CONNECTORS_"+suffix]
		if !ok {
			t.Errorf("IGGY_CONNECTORS_%s missing from RuntimeEnvVars", suffix)
			continue
		}
		if v.Key == "" || v.Help == "" {
			t.Errorf("%s has no key or help: %+v", v.Name, v)
		}
		// Each listed default must load back to the built-in default.
		if v.Default != "" {
			r, err := config.LoadRuntime("", []string{v.Name + "=" + v.Default})
			if err != nil || !reflect.DeepEqual(r, config.DefaultRuntime()) {
				t.Errorf("%s=%s does not load as the default: %v", v.Name, v.Default, err)
			}
		}
	}
	for _, secret := range []string{"IGGY_CONNECTORS_HTTP_API_KEY", "IGGY_CONNECTORS_IGGY_PASSWORD", "IGGY_CONNECTORS_IGGY_TOKEN"} {
		if !byName[secret].Secret {
			t.Errorf("%s is not marked secret", secret)
		}
	}
	if byName[config.EnvConfigPath].Default != "core/connectors/runtime/config.toml" {
		t.Errorf("config path default = %q", byName[config.EnvConfigPath].Default)
	}
}

func TestUnknownRuntimeVars(t *testing.T) {
	warnings := config.UnknownRuntimeVars([]string{
		"IGGY_CONNECTORS_IGGY_USERNAM=x",        // typo: suggestion expected
		"IGGY_CONNECTORS_IGGY_USERNAME=x",       // known
		"IGGY_CONNECTORS_CONFIG_PATH=x",         // loader variable
		"IGGY_CONNECTORS_SINK_STDOUT_ENABLED=x", // connector override
		"IGGY_CONNECTORS_SOURCE_RANDOM_NAME=x",  // connector override
		"IGGY_CONNECTORS_CONNECTORS_REQUEST_HEADERS_AUTHORIZATION=x",
		"OTHER=1",
	})
	if len(warnings) != 2 {
		t.Fatalf("warnings = %q, want 2", warnings)
	}
	if !strings.Contains(warnings[0], "IGGY_CONNECTORS_IGGY_USERNAM ") || !strings.Contains(warnings[0], "did you mean IGGY_CONNECTORS_IGGY_USERNAME") {
		t.Errorf("typo warning = %q", warnings[0])
	}
	if !strings.Contains(warnings[1], "IGGY_CONNECTORS_CONNECTORS_REQUEST_HEADERS_AUTHORIZATION") {
		t.Errorf("map key warning = %q", warnings[1])
	}
}

func TestLoadFindsFileAndDotEnv(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "core/connectors/runtime/config.toml"), "[state]\npath = \"found_in_ancestor\"\n")
	writeFile(t, filepath.Join(root, "a", ".env"), "IGGY_CONNECTORS_IGGY_USERNAME=from_dotenv\nIGGY_CONNECTORS_IGGY_PASSWORD=from_dotenv\n")

	loaded, err := config.Load([]string{"IGGY_CONNECTORS_IGGY_PASSWORD=from_process"}, work)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Path != filepath.Join(root, "core/connectors/runtime/config.toml") {
		t.Errorf("Path = %q", loaded.Path)
	}
	if loaded.Runtime.State.Path != "found_in_ancestor" {
		t.Errorf("state.path = %q, want the file's", loaded.Runtime.State.Path)
	}
	if loaded.Runtime.Iggy.Username != "from_dotenv" {
		t.Errorf("username = %q, want dotenv's", loaded.Runtime.Iggy.Username)
	}
	if loaded.Runtime.Iggy.Password != "from_process" {
		t.Errorf("password = %q: dotenv must not replace a set variable", loaded.Runtime.Iggy.Password)
	}
	if !slices.Contains(loaded.Env, "IGGY_CONNECTORS_IGGY_USERNAME=from_dotenv") {
		t.Errorf("Env lacks the dotenv value: %q", loaded.Env)
	}
	wantOverrides := []string{
		"IGGY_CONNECTORS_IGGY_USERNAME value changed to: from_dotenv from environment variable",
		"IGGY_CONNECTORS_IGGY_PASSWORD value changed to: ****** from environment variable",
	}
	if !slices.Equal(loaded.Overrides, wantOverrides) {
		t.Errorf("Overrides = %q, want %q", loaded.Overrides, wantOverrides)
	}
}

func TestLoadExplicitPathsAndMissingFile(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, filepath.Join(dir, "rt.toml"), "[state]\npath = \"explicit\"\n")
	envFile := writeFile(t, filepath.Join(dir, "custom.env"), "IGGY_CONNECTORS_LOGGING_FORMAT=json\n")
	tests := []struct {
		name        string
		env         []string
		wantPath    string
		wantState   string
		wantWarning string
	}{
		{"absolute path", []string{"IGGY_CONNECTORS_CONFIG_PATH=" + file}, file, "explicit", ""},
		{"absolute path that is a directory", []string{"IGGY_CONNECTORS_CONFIG_PATH=" + dir}, "", "local_state", "not found"},
		{"missing file", []string{"IGGY_CONNECTORS_CONFIG_PATH=nope/config.toml"}, "", "local_state", "not found"},
		{"empty path", []string{"IGGY_CONNECTORS_CONFIG_PATH="}, "", "local_state", "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append(tt.env, "IGGY_CONNECTORS_ENV_PATH="+envFile)
			loaded, err := config.Load(env, dir)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Path != tt.wantPath || loaded.Runtime.State.Path != tt.wantState {
				t.Errorf("Path %q state %q, want %q %q", loaded.Path, loaded.Runtime.State.Path, tt.wantPath, tt.wantState)
			}
			if loaded.Runtime.Logging.Format != "json" {
				t.Errorf("IGGY_CONNECTORS_ENV_PATH file not loaded")
			}
			joined := strings.Join(loaded.Warnings, "\n")
			if tt.wantWarning != "" && !strings.Contains(joined, tt.wantWarning) || tt.wantWarning == "" && joined != "" {
				t.Errorf("warnings %q, want %q", joined, tt.wantWarning)
			}
		})
	}
}

func TestResolveToken(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, filepath.Join(dir, "pat"), "  secret-token\n")
	blank := writeFile(t, filepath.Join(dir, "blank"), " \n")
	home := t.TempDir()
	t.Setenv("HOME", home)
	writeFile(t, filepath.Join(home, "pat"), "home-token")
	tests := []struct {
		token   string
		want    string
		wantErr bool
	}{
		{"plain", "plain", false},
		{"", "", false},
		{"file:" + good, "secret-token", false},
		{"file:~/pat", "home-token", false},
		{"file:" + blank, "", true},
		{"file:" + filepath.Join(dir, "absent"), "", true},
	}
	for _, tt := range tests {
		got, err := config.Iggy{Token: tt.token}.ResolveToken()
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ResolveToken(%q) = %q, %v; want %q, error %v", tt.token, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestRedactedMasksSecrets(t *testing.T) {
	r := nonDefaultRuntime().Redacted()
	if r.HTTP.APIKey != "******" || r.Iggy.Password != "******" || r.Iggy.Token != "******" {
		t.Fatalf("secrets not masked: %+v %+v", r.HTTP, r.Iggy)
	}
	if r.Iggy.Username != "u" {
		t.Fatalf("username masked too")
	}
	if d := config.DefaultRuntime(); d.Redacted().HTTP.APIKey != "" {
		t.Fatalf("an empty api key must stay empty")
	}
}

func TestDisplayConfig(t *testing.T) {
	for value, want := range map[string]bool{"1": true, "true": true, "TRUE": true, "0": false, "no": false} {
		if got := config.DisplayConfig([]string{"IGGY_DISPLAY_CONFIG=" + value}); got != want {
			t.Errorf("IGGY_DISPLAY_CONFIG=%s: %v, want %v", value, got, want)
		}
	}
	if !config.DisplayConfig(nil) {
		t.Errorf("unset must mean show")
	}
}
