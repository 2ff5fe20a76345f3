package runnerproc

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// EnvSecretsPath names the private file (0600, in the supervisor's 0700 socket directory) in
// which a supervisor hands a runner the variables that carry its secrets (the Iggy password and
// token, the API keys, the config service's request headers, URLs with credentials): a JSON
// object of names and values. The environment a process was started with stays readable in
// /proc/<pid>/environ for as long as it runs, whatever unsetenv does later, so secrets never
// travel there. The runner merges the file into its settings and removes it.
const EnvSecretsPath = "IGGY_CONNECTOR_SECRETS_PATH"

// EncodeSecrets renders NAME=value entries as the content of an EnvSecretsPath file.
func EncodeSecrets(vars []string) ([]byte, error) {
	m := make(map[string]string, len(vars))
	for _, kv := range vars {
		name, value, _ := strings.Cut(kv, "=")
		m[name] = value
	}
	return json.Marshal(m)
}

// MergeSecrets reads the file EnvSecretsPath names in environ, when it names one, removes it, and
// returns environ with its variables appended (later entries win) and EnvSecretsPath dropped. A
// file that cannot be read or parsed is an error naming the variable.
func MergeSecrets(environ []string) ([]string, error) {
	path := ""
	out := make([]string, 0, len(environ)+8)
	for _, kv := range environ {
		if v, ok := strings.CutPrefix(kv, EnvSecretsPath+"="); ok {
			path = v
			continue
		}
		out = append(out, kv)
	}
	if path == "" {
		return environ, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvSecretsPath, err)
	}
	_ = os.Remove(path) // read once; the supervisor removes it too
	var vars map[string]string
	if err := json.Unmarshal(data, &vars); err != nil {
		return nil, fmt.Errorf("%s %s: %w", EnvSecretsPath, path, err)
	}
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, name+"="+vars[name])
	}
	return out, nil
}
