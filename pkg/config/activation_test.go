package config_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// [connectors] activation_probe and activation_max_error_rate: off by default, read from the file
// and the environment, bad values refused naming the key.
func TestActivationKeys(t *testing.T) {
	def := config.DefaultRuntime().Connectors
	if def.ActivationProbe != 0 || def.ActivationMaxErrorRate != 0 {
		t.Fatalf("defaults: probe %v, max error rate %v; want both off", def.ActivationProbe, def.ActivationMaxErrorRate)
	}
	r, err := config.ParseRuntime("config.toml", []byte("[connectors]\nactivation_probe = \"30s\"\nactivation_max_error_rate = 0.05\n"), nil)
	if err != nil || r.Connectors.ActivationProbe != 30*time.Second || r.Connectors.ActivationMaxErrorRate != 0.05 {
		t.Fatalf("file: %+v, %v", r.Connectors, err)
	}
	r, err = config.ParseRuntime("config.toml", []byte("[connectors]\nactivation_max_error_rate = 1\n"), []string{
		"IGGY_CONNECTORS_CONNECTORS_ACTIVATION_PROBE=2m", "IGGY_CONNECTORS_CONNECTORS_ACTIVATION_MAX_ERROR_RATE=0.25"})
	if err != nil || r.Connectors.ActivationProbe != 2*time.Minute || r.Connectors.ActivationMaxErrorRate != 0.25 {
		t.Fatalf("env over file: %+v, %v", r.Connectors, err)
	}
	// Environ hands both on and reads back equal.
	back, err := config.LoadRuntime("", r.Environ())
	if err != nil || back.Connectors.ActivationProbe != r.Connectors.ActivationProbe || back.Connectors.ActivationMaxErrorRate != 0.25 {
		t.Fatalf("Environ round trip: %+v, %v", back.Connectors, err)
	}
	for _, tc := range []struct {
		file string
		env  []string
		want string
	}{
		{file: "[connectors]\nactivation_max_error_rate = 1.5\n", want: "key connectors.activation_max_error_rate: 1.5 is not a share between 0 and 1"},
		{file: "[connectors]\nactivation_max_error_rate = \"5%\"\n", want: "key connectors.activation_max_error_rate: expected a number"},
		{env: []string{"IGGY_CONNECTORS_CONNECTORS_ACTIVATION_MAX_ERROR_RATE=-0.1"}, want: "key connectors.activation_max_error_rate: -0.1 is not a share"},
		{env: []string{"IGGY_CONNECTORS_CONNECTORS_ACTIVATION_MAX_ERROR_RATE=NaN"}, want: "activation_max_error_rate: NaN is not a share"},
		{env: []string{"IGGY_CONNECTORS_CONNECTORS_ACTIVATION_PROBE=soon"}, want: "IGGY_CONNECTORS_CONNECTORS_ACTIVATION_PROBE (key connectors.activation_probe)"},
	} {
		_, err := config.ParseRuntime("config.toml", []byte(tc.file), tc.env)
		if !errors.Is(err, config.ErrInvalidRuntime) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %v: %v, want an error containing %q", tc.file, tc.env, err, tc.want)
		}
	}
}
