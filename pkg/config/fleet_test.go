package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

func TestFleetFromFileAndEnv(t *testing.T) {
	file := `[fleet]
enabled = true
runners = ["10.0.0.5:8081", "http://sink-a:8081"]
dns = ["_http._tcp.runners.iggy.svc.cluster.local", "runners.service.consul:8081"]
refresh = "2s"
runner_api_key = "from-file"
`
	rt, err := config.ParseRuntime("config.toml", []byte(file), []string{"IGGY_CONNECTORS_FLEET_RUNNER_API_KEY=from-env"})
	if err != nil {
		t.Fatal(err)
	}
	f := rt.Fleet
	if !f.Enabled || len(f.Runners) != 2 || len(f.DNS) != 2 || f.Refresh != 2*time.Second || f.RunnerAPIKey != "from-env" {
		t.Fatalf("fleet = %+v", f)
	}
	if got := rt.Redacted().Fleet.RunnerAPIKey; got == "from-env" {
		t.Fatalf("Redacted keeps the runner key in clear: %q", got)
	}
	rt, err = config.ParseRuntime("", nil, []string{
		"IGGY_CONNECTORS_FLEET_ENABLED=true", "IGGY_CONNECTORS_FLEET_RUNNERS=a:1,https://b:2", "IGGY_CONNECTORS_FLEET_REFRESH=500ms",
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rt.Fleet.Runners, " "); got != "a:1 https://b:2" || rt.Fleet.Refresh != 500*time.Millisecond {
		t.Fatalf("fleet from env = %+v", rt.Fleet)
	}
}

func TestFleetBadValuesNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		name, env, key string
	}{
		{"nothing to attach to", "", "fleet.runners"},
		{"runner without port", "IGGY_CONNECTORS_FLEET_RUNNERS=runner-a", "fleet.runners"},
		{"runner with a path", "IGGY_CONNECTORS_FLEET_RUNNERS=http://a:1/x", "fleet.runners"},
		{"runner with a bad scheme", "IGGY_CONNECTORS_FLEET_RUNNERS=ftp://a:1", "fleet.runners"},
		{"runner port 0", "IGGY_CONNECTORS_FLEET_RUNNERS=a:0", "fleet.runners"},
		{"dns A name without port", "IGGY_CONNECTORS_FLEET_DNS=runners.consul", "fleet.dns"},
		{"dns SRV name with port", "IGGY_CONNECTORS_FLEET_DNS=_http._tcp.x:80", "fleet.dns"},
		{"refresh too short", "IGGY_CONNECTORS_FLEET_RUNNERS=a:1\nIGGY_CONNECTORS_FLEET_REFRESH=1ms", "fleet.refresh"},
		{"refresh not a duration", "IGGY_CONNECTORS_FLEET_RUNNERS=a:1\nIGGY_CONNECTORS_FLEET_REFRESH=soon", "FLEET_REFRESH"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"IGGY_CONNECTORS_FLEET_ENABLED=true"}
			if tc.env != "" {
				env = append(env, strings.Split(tc.env, "\n")...)
			}
			_, err := config.ParseRuntime("", nil, env)
			if err == nil {
				t.Fatalf("accepted %v", env)
			}
			if !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("error %q does not name %s", err, tc.key)
			}
		})
	}
	// Disabled, the section is not checked.
	if _, err := config.ParseRuntime("", nil, []string{"IGGY_CONNECTORS_FLEET_DNS=runners.consul"}); err != nil && errors.Is(err, config.ErrInvalidRuntime) {
		t.Fatalf("disabled fleet checked: %v", err)
	}
}

// An entry without a scheme takes fleet.scheme; one with a scheme keeps it.
func TestFleetEndpoint(t *testing.T) {
	for _, c := range []struct{ in, scheme, want string }{
		{"10.0.0.5:8081", "", "http://10.0.0.5:8081"},
		{"10.0.0.5:8081", "http", "http://10.0.0.5:8081"},
		{"10.0.0.5:8081", "https", "https://10.0.0.5:8081"},
		{"http://sink-a:8081/", "https", "http://sink-a:8081"},
		{"https://[::1]:443", "http", "https://[::1]:443"},
	} {
		got, err := config.FleetEndpoint(c.in, c.scheme)
		if err != nil || got != c.want {
			t.Errorf("FleetEndpoint(%q, %q) = %q, %v; want %q", c.in, c.scheme, got, err, c.want)
		}
	}
}

// [fleet] scheme, ca_file and server_name, from the file and their variables; http by default, and
// a scheme other than http or https is refused naming the key.
func TestFleetTLSKeys(t *testing.T) {
	rt, err := config.ParseRuntime("config.toml", []byte("[fleet]\nenabled = true\nrunners = [\"a:1\"]\n"), nil)
	if err != nil || rt.Fleet.Scheme != "http" || rt.Fleet.CAFile != "" || rt.Fleet.ServerName != "" {
		t.Fatalf("defaults: %+v, %v", rt.Fleet, err)
	}
	rt, err = config.ParseRuntime("config.toml", []byte("[fleet]\nenabled = true\nrunners = [\"a:1\"]\nscheme = \"https\"\nca_file = \"/etc/ca.pem\"\nserver_name = \"runner.svc\"\n"), nil)
	if err != nil || rt.Fleet.Scheme != "https" || rt.Fleet.CAFile != "/etc/ca.pem" || rt.Fleet.ServerName != "runner.svc" {
		t.Fatalf("from the file: %+v, %v", rt.Fleet, err)
	}
	rt, err = config.ParseRuntime("", nil, []string{"IGGY_CONNECTORS_FLEET_ENABLED=true", "IGGY_CONNECTORS_FLEET_RUNNERS=a:1",
		"IGGY_CONNECTORS_FLEET_SCHEME=https", "IGGY_CONNECTORS_FLEET_CA_FILE=/run/ca.pem", "IGGY_CONNECTORS_FLEET_SERVER_NAME=r.example"})
	if err != nil || rt.Fleet.Scheme != "https" || rt.Fleet.CAFile != "/run/ca.pem" || rt.Fleet.ServerName != "r.example" {
		t.Fatalf("from the environment: %+v, %v", rt.Fleet, err)
	}
	_, err = config.ParseRuntime("", nil, []string{"IGGY_CONNECTORS_FLEET_ENABLED=true", "IGGY_CONNECTORS_FLEET_RUNNERS=a:1", "IGGY_CONNECTORS_FLEET_SCHEME=ftp"})
	if err == nil || !strings.Contains(err.Error(), "IGGY_CONNECTORS_FLEET_SCHEME") {
		t.Fatalf("scheme ftp: %v", err)
	}
}
