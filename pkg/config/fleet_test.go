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

func TestFleetEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.5:8081": "http://10.0.0.5:8081", "http://sink-a:8081/": "http://sink-a:8081",
		"https://[::1]:443": "https://[::1]:443",
	} {
		got, err := config.FleetEndpoint(in)
		if err != nil || got != want {
			t.Errorf("FleetEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
