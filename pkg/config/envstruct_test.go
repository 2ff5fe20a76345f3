package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/iggy-connectors-go/runtime/pkg/config"
)

// exampleEnv is shaped like the runner's and the supervisor's Env structs.
type exampleEnv struct {
	Path    string        `env:"EXAMPLE_PATH,notEmpty" help:"a file"`
	Timeout time.Duration `env:"EXAMPLE_TIMEOUT" envDefault:"5s" help:"how long"`
	Retries int           `env:"EXAMPLE_RETRIES" envDefault:"3"`
}

func TestParseEnvStruct(t *testing.T) {
	tests := []struct {
		name    string
		environ []string
		want    exampleEnv
		wantErr string // "" = must parse
	}{
		{"defaults", []string{"EXAMPLE_PATH=/a"}, exampleEnv{Path: "/a", Timeout: 5 * time.Second, Retries: 3}, ""},
		{"later entry wins", []string{"EXAMPLE_PATH=/a", "EXAMPLE_RETRIES=1", "EXAMPLE_RETRIES=7"}, exampleEnv{Path: "/a", Timeout: 5 * time.Second, Retries: 7}, ""},
		{"value containing =", []string{"EXAMPLE_PATH=/a=b"}, exampleEnv{Path: "/a=b", Timeout: 5 * time.Second, Retries: 3}, ""},
		{"bad duration names the variable", []string{"EXAMPLE_PATH=/a", "EXAMPLE_TIMEOUT=soon"}, exampleEnv{}, "EXAMPLE_TIMEOUT: invalid time.Duration"},
		{"bad int names the variable", []string{"EXAMPLE_PATH=/a", "EXAMPLE_RETRIES=many"}, exampleEnv{}, "EXAMPLE_RETRIES: invalid int"},
		{"missing required variable", nil, exampleEnv{}, `"EXAMPLE_PATH"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got exampleEnv
			err := config.ParseEnvStruct(&got, tt.environ)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestStructEnvVarsListsTagsInDeclarationOrder(t *testing.T) {
	want := []config.EnvVar{
		{Name: "EXAMPLE_PATH", Help: "a file"},
		{Name: "EXAMPLE_TIMEOUT", Default: "5s", Help: "how long"},
		{Name: "EXAMPLE_RETRIES", Default: "3"},
	}
	got := config.StructEnvVars(exampleEnv{})
	if len(got) != len(want) {
		t.Fatalf("got %d variables %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("variable %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestEnvMap(t *testing.T) {
	got := config.EnvMap([]string{"A=1", "B=x=y", "NOEQUALS", "A=2", "C="})
	want := map[string]string{"A": "2", "B": "x=y", "C": ""}
	if len(got) != len(want) {
		t.Fatalf("EnvMap = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("EnvMap[%q] = %q, want %q", k, got[k], v)
		}
	}
}
