package config

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/joho/godotenv"
)

// Loaded is the outcome of Load: the effective runtime configuration and how
// it was found.
type Loaded struct {
	Runtime Runtime
	// Path is the runtime file that was read, "" when none was found (the
	// defaults and the environment were used, as upstream does).
	Path string
	// Env is the environment the configuration was read from: the given one
	// plus the dotenv values it did not already set. Callers that read more
	// variables (the runner's IGGY_CONNECTOR_*) should read them from here.
	Env []string
	// Warnings are worth logging but did not stop loading: a missing file,
	// unknown IGGY_CONNECTORS_* variables.
	Warnings []string
	// Overrides describe each variable that changed a key, secrets masked,
	// for the info log upstream also writes.
	Overrides []string
}

// Load does what the supervisor does at startup (docs/config.md §1.1): merge the
// dotenv file into env, find the runtime file named by
// IGGY_CONNECTORS_CONFIG_PATH (default core/connectors/runtime/config.toml,
// relative paths searched from workDir up to /), and load it with the
// IGGY_CONNECTORS_* overrides. A missing file is a warning, not an error.
func Load(env []string, workDir string) (Loaded, error) {
	env = WithDotEnv(env, workDir)
	vars := EnvMap(env)
	out := Loaded{Env: env, Warnings: UnknownRuntimeVars(env)}

	requested, set := vars[EnvConfigPath]
	if !set {
		requested = DefaultConfigPath
	}
	out.Path = FindRuntimeFile(requested, workDir)
	if out.Path == "" {
		out.Warnings = append(out.Warnings, fmt.Sprintf("runtime config file %q not found (%s); using defaults and environment variables", requested, EnvConfigPath))
	}
	r, err := LoadRuntime(out.Path, env)
	if err != nil {
		return out, err
	}
	out.Runtime = r
	out.Overrides = AppliedRuntimeVars(env)
	return out, nil
}

// AppliedRuntimeVars describes the runtime variables in env that set a key:
// "<NAME> value changed to: <value> from environment variable", with
// secrets shown as ******.
func AppliedRuntimeVars(env []string) []string {
	vars := EnvMap(env)
	var out []string
	for _, f := range runtimeFields {
		value, ok := vars[f.envName()]
		if !ok || value == "" {
			continue
		}
		if f.secret {
			value = masked
		}
		out = append(out, fmt.Sprintf("%s value changed to: %s from environment variable", f.envName(), value))
	}
	return out
}

// FindRuntimeFile resolves the runtime file path: an absolute path is used
// only if it is a regular file; a relative one is tried in workDir and then
// in each ancestor directory. It returns "" when nothing is found.
func FindRuntimeFile(path, workDir string) string {
	if path == "" {
		return ""
	}
	if filepath.IsAbs(path) {
		if isRegularFile(path) {
			return path
		}
		return ""
	}
	return findUpwards(path, workDir)
}

// WithDotEnv returns env extended with the dotenv file's variables that env
// does not already set: the file named by IGGY_CONNECTORS_ENV_PATH, or else
// .env in workDir or its nearest ancestor that has one. An unreadable or
// malformed file is ignored, as upstream does.
func WithDotEnv(env []string, workDir string) []string {
	vars := EnvMap(env)
	path, set := vars[EnvEnvPath]
	if !set {
		path = findUpwards(".env", workDir)
	}
	if path == "" {
		return env
	}
	fileVars, err := godotenv.Read(path)
	if err != nil {
		return env
	}
	out := append([]string(nil), env...)
	for _, name := range sortedKeys(fileVars) {
		if _, exists := vars[name]; exists {
			continue
		}
		out = append(out, name+"="+fileVars[name])
	}
	return out
}

func findUpwards(name, workDir string) string {
	dir, err := filepath.Abs(workDir)
	if err != nil {
		return ""
	}
	for {
		candidate := filepath.Join(dir, name)
		if isRegularFile(candidate) {
			return candidate
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isRegularFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}
